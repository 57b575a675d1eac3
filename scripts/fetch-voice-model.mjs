#!/usr/bin/env node
// Copies the speaker encoder named in wasm/models/voice-manifest.json into wasm/models/ (ignored by git).
//
// The file comes from ../shared/models/voice/ (beside the project). Its SHA-256 must match the manifest. The
// README beside the source (provenance and licences of the weights) is copied too, as
// resemblyzer_ge2e_fp16w.README.md. Idempotent: exits at once when the model is present with the right hash.
// When BIMS_VOICE_MODEL names a model file (or the folder holding it), the service reads that file directly:
// nothing is copied, the script only says whether it exists.
//
// Without the model, BIMS still starts: faces work, and voice operations answer 503. On a machine without
// ../shared/, the model is built from Resemblyzer's checkpoint: npm run voice-model -- --from pretrained.pt
//
// Usage: node scripts/fetch-voice-model.mjs [--check]   (--check: verify only)
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const modelsDir = join(root, 'wasm', 'models');
const manifest = JSON.parse(readFileSync(join(modelsDir, 'voice-manifest.json'), 'utf8'));
const { file, sha256: want } = manifest.model;
const target = join(modelsDir, file);
const readmeTarget = join(modelsDir, file.replace(/\.onnx$/, '.README.md'));
const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');

function sources() {
  return [join(root, manifest.source.default, file)];
}

function main() {
  const named = process.env.BIMS_VOICE_MODEL;
  if (named) {
    const path = existsSync(named) && statSync(named).isDirectory() ? join(named, file) : named;
    if (existsSync(path))
      console.log(
        `fetch-voice-model: BIMS_VOICE_MODEL names ${path}; BIMS reads it from there (checked when it starts)`,
      );
    else console.error(`fetch-voice-model: BIMS_VOICE_MODEL names ${path}, which does not exist`);
    return existsSync(path) ? 0 : 1;
  }
  if (existsSync(target) && sha256(readFileSync(target)) === want) {
    console.log(`fetch-voice-model: ${file} OK (${manifest.templateVersion})`);
    return 0;
  }
  if (process.argv.includes('--check')) {
    console.error(`fetch-voice-model: ${file} is ${existsSync(target) ? 'corrupt' : 'missing'}`);
    return 1;
  }
  const from = sources().find((p) => existsSync(p));
  if (!from) {
    console.error(
      `fetch-voice-model: ${file} not found (looked in ${sources().join(', ')}); build it from Resemblyzer's pretrained.pt with \`npm run voice-model -- --from pretrained.pt\` (docs/voice.md) or name a model file in BIMS_VOICE_MODEL. Voice operations will answer 503 until then; faces are not affected.`,
    );
    return 1;
  }
  const data = readFileSync(from);
  const got = sha256(data);
  if (got !== want) {
    console.error(`fetch-voice-model: ${from} has sha256 ${got}, expected ${want}: refusing to use it`);
    return 1;
  }
  const tmp = `${target}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, target);
  const readme = join(dirname(from), manifest.source.readme);
  if (existsSync(readme)) copyFileSync(readme, readmeTarget);
  else writeFileSync(readmeTarget, `# ${file}\n\n${manifest.attribution}\n`);
  console.log(`fetch-voice-model: wrote wasm/models/${file} (${data.length} bytes) and its attribution`);
  return 0;
}

process.exitCode = main();
