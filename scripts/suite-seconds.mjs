#!/usr/bin/env node
// `npm run test:seconds`: writes test/support/suite-seconds.json, the seconds each test file took in this
// checkout's last run of it (vitest's own results cache), for the sequencer to start the longest files first
// in a clone that has never run the suite (test/support/longest-first-sequencer.ts). Run it after a whole
// `npm test` when the suite's shape has changed; the file is generated, never edited by hand.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cacheRoot = join(root, 'node_modules', '.vite', 'vitest');
const out = join(root, 'test', 'support', 'suite-seconds.json');

const seconds = {};
for (const dir of existsSync(cacheRoot) ? readdirSync(cacheRoot) : []) {
  const file = join(cacheRoot, dir, 'results.json');
  if (!existsSync(file)) continue;
  for (const [key, result] of JSON.parse(readFileSync(file, 'utf8')).results ?? []) {
    // `project:path`; a failed run's time says little about a passing one.
    if (!result?.duration || result.failed) continue;
    const path = key.slice(key.indexOf(':') + 1);
    if (!existsSync(join(root, path))) continue;
    seconds[key] = Math.max(seconds[key] ?? 0, Math.round(result.duration / 100) / 10);
  }
}
const sorted = Object.fromEntries(Object.entries(seconds).sort(([, a], [, b]) => b - a));
if (!Object.keys(sorted).length) {
  console.error('suite-seconds: no results in vitest cache (node_modules/.vite/vitest): run `npm test` first');
  process.exit(1);
}
writeFileSync(out, `${JSON.stringify(sorted, null, 1)}\n`);
console.log(`suite-seconds: wrote ${Object.keys(sorted).length} files to ${out}`);
