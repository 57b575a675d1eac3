#!/usr/bin/env node
// Puts the speaker encoder named in wasm/models/voice-manifest.json into wasm/models/ (ignored by git), from the
// first source that has it:
//   1. ../shared/models/voice/ (beside the project): copied, its SHA-256 checked against the manifest, with the
//      README (provenance and licences of the weights) as resemblyzer_ge2e_fp16w.README.md;
//   2. BIMS_VOICE_MODEL, naming a model file (or the folder holding it): the service reads that file directly,
//      nothing is copied, the script only says whether it exists;
//   3. the internet: Resemblyzer's published checkpoint, downloaded from the commit pinned in the manifest
//      (`download`) and converted by `npm run voice-model` (scripts/voice-model.ts), which installs the model only
//      when it is the pinned one, bit for bit. The download is bounded in time; nothing half-written is left.
// Idempotent: exits at once when the model is present with a known hash (the shipped file or the converted one).
// A model of another hash is replaced by the shipped copy when there is one, and otherwise left alone (it may be
// one the user built from another checkpoint; BIMS checks it at start).
//
// Without any of them BIMS still starts: faces work, and voice operations answer 503. The message says what to do.
// npm install runs this through scripts/postinstall.mjs, which never fails because of it.
//
// Usage: node scripts/fetch-voice-model.mjs [--check] [--models-dir DIR] [--shared-dir DIR]
//                                          [--url URL] [--sha256 HEX] [--timeout SECONDS]
//   --check       verify only
//   --models-dir  where to install (default wasm/models/; elsewhere, name it in BIMS_VOICE_MODEL)
//   --shared-dir  where the shipped copy is looked for (default ../shared/models/voice/)
//   --url, --sha256, --timeout   passed to the download (a mirror's address, its checkpoint's hash, a time bound)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(join(root, 'wasm', 'models', 'voice-manifest.json'), 'utf8'));
const { file, sha256: shipped } = manifest.model;
const download = manifest.download;
const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');
const say = (line) => console.log(`fetch-voice-model: ${line}`);
const complain = (line) => console.error(`fetch-voice-model: ${line}`);

const { values: args } = parseArgs({
  options: {
    check: { type: 'boolean', default: false },
    'models-dir': { type: 'string', default: join(root, 'wasm', 'models') },
    'shared-dir': { type: 'string', default: join(root, manifest.source.default) },
    url: { type: 'string' },
    sha256: { type: 'string' },
    timeout: { type: 'string' },
  },
  strict: true,
});
const target = join(resolve(args['models-dir']), file);
const shown = relative(process.cwd(), target) || target;

/** A model file with a hash this project knows: the shipped one, or the one converted from the published weights. */
function installedHash() {
  if (!existsSync(target)) return null;
  const got = sha256(readFileSync(target));
  return got === shipped || got === download.modelSha256 ? got : `unknown:${got}`;
}

/** 1. The shipped copy beside the project. */
function copyShared(from) {
  const data = readFileSync(from);
  const got = sha256(data);
  if (got !== shipped) {
    complain(`${from} has sha256 ${got}, expected ${shipped}: refusing to use it`);
    return 1;
  }
  const tmp = `${target}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, target);
  const readme = join(dirname(from), manifest.source.readme);
  const readmeTarget = target.replace(/\.onnx$/, '.README.md');
  if (existsSync(readme)) copyFileSync(readme, readmeTarget);
  else writeFileSync(readmeTarget, `# ${file}\n\n${manifest.attribution}\n`);
  say(`wrote ${shown} (${data.length} bytes) and its attribution`);
  return 0;
}

/** The converter: the TypeScript source through tsx in the repository, its compiled form in the npm package. */
function converter() {
  const source = join(root, 'scripts', 'voice-model.ts');
  if (existsSync(source)) return ['--import', 'tsx', source];
  return [join(root, 'dist', 'scripts', 'voice-model.js')];
}

/** 3. The published checkpoint, downloaded and converted. */
function downloadAndConvert() {
  const forwarded = ['url', 'sha256', 'timeout'].flatMap((k) => (args[k] === undefined ? [] : [`--${k}`, args[k]]));
  say(`no shipped copy and no BIMS_VOICE_MODEL: fetching Resemblyzer's checkpoint to build the voice model`);
  const seconds = Number(args.timeout ?? download.timeoutSeconds);
  const run = spawnSync(process.execPath, [...converter(), '--out', target, ...forwarded], {
    cwd: root,
    stdio: 'inherit',
    // The download bounds itself; this only stops a conversion that would never end.
    timeout: (seconds + 300) * 1000,
  });
  if (run.status === 0) {
    say(`voice is on: ${shown} is Resemblyzer's published weights, converted (BIMS loads it at its next start)`);
    return 0;
  }
  const url = args.url ?? download.url;
  const what =
    run.status === 3
      ? `Resemblyzer's checkpoint could not be downloaded (the reason is above)`
      : `the downloaded checkpoint was refused (the reason is above)`;
  complain(
    [
      `${file} is NOT installed: ${what}. Voice operations answer 503 until it is; faces are not affected.`,
      'To turn voice on, any one of:',
      '  - once this machine reaches the internet: npm run voice-model',
      `  - on a machine that does, download ${url}`,
      '    (or take resemblyzer/pretrained.pt from the Python package: pip download resemblyzer==0.1.4, a zip),',
      '    copy it here and run: npm run voice-model -- --from pretrained.pt',
      `  - put the shipped model in ${resolve(args['shared-dir'])} and run: node scripts/fetch-voice-model.mjs`,
      '  - name a model file in BIMS_VOICE_MODEL (docs/voice.md)',
    ].join('\n'),
  );
  return 1;
}

function main() {
  const present = installedHash();
  if (present && !present.startsWith('unknown:')) {
    say(
      `${file} OK (${manifest.templateVersion}${present === shipped ? '' : ', converted from the published checkpoint'})`,
    );
    return 0;
  }
  if (args.check) {
    complain(`${shown} is ${present ? 'corrupt or not a known model' : 'missing'}`);
    return 1;
  }
  const shared = join(resolve(args['shared-dir']), file);
  if (existsSync(shared)) return copyShared(shared);
  if (present) {
    // Likely a model the user built from another checkpoint: never downloaded over.
    say(
      `${shown} holds a model this project does not know (sha256 ${present.slice(8)}): left as it is. BIMS uses it only if it reproduces the reference embedding; delete it and run this again to fetch the published one`,
    );
    return 0;
  }
  const named = process.env.BIMS_VOICE_MODEL;
  if (named) {
    const path = existsSync(named) && statSync(named).isDirectory() ? join(named, file) : named;
    if (existsSync(path)) say(`BIMS_VOICE_MODEL names ${path}; BIMS reads it from there (checked when it starts)`);
    else complain(`BIMS_VOICE_MODEL names ${path}, which does not exist`);
    return existsSync(path) ? 0 : 1;
  }
  return downloadAndConvert();
}

process.exitCode = main();
