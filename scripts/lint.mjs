#!/usr/bin/env node
// `npm run lint` (also the first step of `npm test`): Biome's lint rules (biome.jsonc) over src, workers, scripts,
// test and bench, then the import rules of src/ (scripts/lint-imports.mjs: the layers, Node's built-ins, cycles). Warnings fail it too. `npm run format` writes the
// formatting; `npm run lint -- --write` applies the rules' safe fixes.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// >>> The format check. Off until the whole tree has been formatted once, in a commit of its own
// (`npm run format`); then set this to true and `npm run lint` also fails on unformatted code. <<<
const CHECK_FORMAT = true;

const biome = fileURLToPath(new URL('../node_modules/@biomejs/biome/bin/biome', import.meta.url));
const command = CHECK_FORMAT ? 'check' : 'lint';
const run = spawnSync(process.execPath, [biome, command, '--error-on-warnings', ...process.argv.slice(2)], {
  stdio: 'inherit',
  cwd: fileURLToPath(new URL('..', import.meta.url)),
});
if (run.status !== 0) process.exit(run.status ?? 1);
const imports = spawnSync(process.execPath, [fileURLToPath(new URL('./lint-imports.mjs', import.meta.url))], {
  stdio: 'inherit',
});
process.exit(imports.status ?? 1);
