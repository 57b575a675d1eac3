#!/usr/bin/env node
// `npm test`: start what the tests need (PostgreSQL, models, test photos and speech), then run the whole suite.
// Everything here is idempotent, so a second run is quick.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const step = (what) => console.log(`\n[test] ${what}`);

if (!process.env.DATABASE_URL) {
  step('PostgreSQL');
  process.env.DATABASE_URL = execFileSync('bash', ['scripts/ensure-postgres.sh', 'bims_test'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}
console.log(`[test] DATABASE_URL=${process.env.DATABASE_URL.replace(/:[^:@/]*@/, ':***@')}`);

step('Chromium for browser tests');
execFileSync('bash', ['scripts/ensure-chromium.sh'], { stdio: 'inherit' });
step('Janus for the media gateway tests');
execFileSync('bash', ['scripts/ensure-janus.sh'], { stdio: 'inherit' });
// Capture sessions decode the forwarded RTP with ffmpeg in the sidecar.
execFileSync('bash', ['scripts/ensure-ffmpeg.sh'], { stdio: 'inherit' });
step('iproute2 for the media test\'s host-local link');
execFileSync('bash', ['scripts/media-net.sh', 'ensure'], { stdio: 'inherit' });

for (const script of ['scripts/fetch-models.mjs', 'scripts/fetch-voice-model.mjs', 'scripts/fetch-test-photos.mjs', 'scripts/fetch-test-speech.mjs']) {
  if (!existsSync(script)) continue;
  step(script);
  const run = spawnSync(process.execPath, [script], { stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}

step('vitest');
const vitest = spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...process.argv.slice(2)], { stdio: 'inherit', env: process.env });
process.exit(vitest.status ?? 1);
