#!/usr/bin/env node
// `npm test`: start what the tests need (PostgreSQL, models, test photos and speech), then run the whole suite.
// Everything here is idempotent, so a second run is quick.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { ensureTool } from './tool.mjs';

const step = (what) => console.log(`\n[test] ${what}`);

// The lint first (a few seconds): a whole run is not spent on a tree that fails it. Chosen files skip it.
if (process.argv.length <= 2) {
  step('lint (npm run lint)');
  const lint = spawnSync(process.execPath, ['scripts/lint.mjs'], { stdio: 'inherit' });
  if (lint.status !== 0) process.exit(lint.status ?? 1);
}

if (!process.env.DATABASE_URL) {
  step('PostgreSQL');
  process.env.DATABASE_URL = execFileSync('bash', ['scripts/ensure-postgres.sh', 'bims_test'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}
console.log(`[test] DATABASE_URL=${process.env.DATABASE_URL.replace(/:[^:@/]*@/, ':***@')}`);

step('Chromium for browser tests');
execFileSync('bash', ['scripts/ensure-chromium.sh'], { stdio: 'inherit' });
step('Janus for the media gateway tests');
execFileSync('bash', ['scripts/ensure-janus.sh'], { stdio: 'inherit' });
// Capture sessions decode the forwarded RTP with ffmpeg in the sidecar.
execFileSync('bash', ['scripts/ensure-ffmpeg.sh'], { stdio: 'inherit' });
step('zbarimg for the QR code test');
execFileSync('bash', ['scripts/ensure-zbar.sh'], { stdio: 'inherit' });
step('nats-server for the matcher cluster tests');
execFileSync('bash', ['scripts/ensure-nats.sh'], { stdio: ['ignore', 'ignore', 'inherit'] });
step("iproute2 for the media test's host-local link");
execFileSync('bash', ['scripts/media-net.sh', 'ensure'], { stdio: 'inherit' });

// The tools some suites run (Node 22 and wrangler for Workers, deno, onnxruntime-node), kept out of the root
// install in tools/ (scripts/tool.mjs): installed here, before the suites, so that no test's time goes to npm.
step('tools/: Node 22, wrangler, deno, onnxruntime-node');
for (const tool of ['node22', 'workers', 'deno', 'bench']) ensureTool(tool);

for (const script of [
  'scripts/fetch-models.mjs',
  'scripts/fetch-voice-model.mjs',
  'scripts/fetch-test-photos.mjs',
  'scripts/fetch-test-speech.mjs',
]) {
  if (!existsSync(script)) continue;
  step(script);
  const run = spawnSync(process.execPath, [script], { stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}

// Suites whose assertions include a bound in seconds that the issue they test sets (e.g. "no IDENTIFY held
// past 5 s"): they run after the others, one file at a time, so that a neighbour suite's load cannot fail them.
const ALONE = ['test/runtime/extraction-admission.test.ts'];
const vitest = (args) =>
  spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...args], {
    stdio: 'inherit',
    env: process.env,
  }).status ?? 1;
const chosen = process.argv.slice(2);
if (chosen.length) process.exit(vitest(chosen));
step('vitest');
const first = vitest(ALONE.flatMap((file) => ['--exclude', file]));
step('vitest: suites that run alone');
const second = vitest(['--no-file-parallelism', ...ALONE]);
process.exit(first || second);
