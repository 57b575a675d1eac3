#!/usr/bin/env node
// `npm run build`: the npm package's contents in dist/ (package.json `files` says what is published).
//   1. tsc -p tsconfig.build.json: dist/src, dist/workers, dist/scripts as JavaScript with declarations, and the
//      JSON the code imports (dist/wasm/models/*.json)
//   2. the non-code files modules find beside themselves: Janus configuration templates, dashboard pages
//   3. the browser SDK bundle (scripts/build-sdk.mjs): dist/sdk
// The face models are not published: the package's postinstall fetches them into wasm/models/.
// `--no-declarations`: the JavaScript without the .d.ts files, in about half the CPU (7 against 15 CPU-s): what
// `npm test` builds for the BIMS processes its suites start, which need no types (scripts/test.mjs).
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const started = performance.now();
const run = (args) => execFileSync(process.execPath, args, { cwd: root, stdio: 'inherit' });

for (const dir of ['src', 'workers', 'scripts', 'wasm'])
  rmSync(join(root, 'dist', dir), { recursive: true, force: true });
const declarations = !process.argv.includes('--no-declarations');
run([
  join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
  '-p',
  'tsconfig.build.json',
  ...(declarations ? [] : ['--declaration', 'false']),
]);

for (const dir of ['src/sidecar/janus', 'src/dashboard/public']) {
  if (existsSync(join(root, dir))) cpSync(join(root, dir), join(root, 'dist', dir), { recursive: true });
}
chmodSync(join(root, 'dist', 'src', 'runtime', 'cli.js'), 0o755);

run([join(root, 'scripts', 'build-sdk.mjs')]);
console.log(`[build] dist/ ready in ${Math.round(performance.now() - started)} ms (bin: dist/src/runtime/cli.js)`);
