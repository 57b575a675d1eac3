#!/usr/bin/env node
// `npm run test:postgres`: the HTTP and runtime suites over PostgreSQL only (the server the project's script
// starts), for when a change touches SQL and PGlite has already passed. Extra arguments go to vitest.
import { execFileSync, spawnSync } from 'node:child_process';

const url =
  process.env.DATABASE_URL ??
  execFileSync('bash', ['scripts/ensure-postgres.sh', 'bims_test'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
const args = [
  'node_modules/vitest/vitest.mjs',
  'run',
  '--project',
  'http',
  '--project',
  'runtime',
  ...process.argv.slice(2),
];
const run = spawnSync(process.execPath, args, {
  stdio: 'inherit',
  env: { ...process.env, DATABASE_URL: url, BIMS_TEST_DIALECTS: 'postgres' },
});
process.exit(run.status ?? 1);
