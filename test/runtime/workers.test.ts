// BIMS on Cloudflare Workers, locally: `npm run build:workers` (wrangler deploy --dry-run, the exact upload)
// must fit the Workers size limits, then that output runs in workerd through `wrangler dev --no-bundle`
// (Miniflare) with Hyperdrive's local connection string on a fresh PostgreSQL database, and passes the
// runtime smoke suite: enrolment, verification and identification run inside the isolate on
// onnxruntime-web's compiled wasm module. wrangler and Miniflare need Node 22: see scripts/node22.mjs.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgres } from '../support/databases.js';
import { smokeSuite } from './smoke/smoke-suite.js';

const root = join(import.meta.dirname, '..', '..');
const ADMIN_PASSWORD = 'workers-smoke-admin-password';
const MIB = 1024 * 1024;
const photo = (path: string) => new Uint8Array(readFileSync(join(root, 'test', 'fixtures', 'photos', 'labelled', path)));

interface SizeReport {
  modules: { file: string; bytes: number; gzip: number }[];
  total: { bytes: number; gzip: number };
  fitsPaidPlan: boolean;
  assets: { files: number; largest: number; limit: number };
}

/** Start `wrangler dev` on the built Worker and wait for its "Ready on" line. */
function startWrangler(databaseUrl: string): Promise<{ url: string; child: ChildProcess; output: () => string }> {
  const node22 = execFileSync(process.execPath, [join(root, 'scripts', 'node22.mjs')], { encoding: 'utf8' }).trim();
  const port = String(20000 + Math.floor(Math.random() * 20000));
  const child = spawn(node22, [
    join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js'), 'dev', 'dist/cloudflare/workers.js', '--no-bundle',
    '--ip', '127.0.0.1', '--port', port, '--persist-to', '.cache/wrangler-state', '--show-interactive-dev-session=false',
    '--var', `BIMS_ADMIN_PASSWORD:${ADMIN_PASSWORD}`, '--var', 'BIMS_LOG_LEVEL:warn',
  ], {
    cwd: root,
    env: {
      PATH: process.env.PATH!,
      HOME: process.env.HOME ?? '/tmp',
      WRANGLER_SEND_METRICS: 'false',
      WRANGLER_LOG_PATH: join(root, '.cache', 'wrangler-logs'),
      CLOUDFLARE_HYPERDRIVE_LOCAL_CONNECTION_STRING_HYPERDRIVE: databaseUrl,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const seen = (d: Buffer) => {
      output += d;
      const ready = output.match(/Ready on (http:\/\/[\d.:]+)/);
      if (ready) resolve({ url: ready[1]!, child, output: () => output });
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.on('exit', (code) => reject(new Error(`wrangler dev exited with ${code} before it was ready:\n${output}`)));
  });
}

/** Hyperdrive insists on a password in its connection string; PostgreSQL's trust authentication ignores it. */
function withPassword(url: string): string {
  const u = new URL(url);
  if (!u.password) u.password = 'unused-with-trust-authentication';
  return u.toString();
}

describe.skipIf(!process.env.DATABASE_URL)('BIMS on Cloudflare Workers (wrangler dev on the dry-run build)', () => {
  let size: SizeReport;
  let worker: Awaited<ReturnType<typeof startWrangler>>;
  let dropDatabase: () => Promise<void> = async () => {};

  beforeAll(async () => {
    execFileSync(process.execPath, [join(root, 'scripts', 'build-workers.mjs')], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    size = JSON.parse(readFileSync(join(root, 'dist', 'cloudflare', 'size.json'), 'utf8'));
    const database = await freshPostgres();
    dropDatabase = database.drop;
    worker = await startWrangler(withPassword(database.url));
  }, 240_000);

  afterAll(async () => {
    worker?.child.kill('SIGTERM');
    if (worker && worker.child.exitCode === null) await new Promise((r) => worker.child.once('exit', r));
    await dropDatabase();
  });

  it('the upload fits the paid plan (10 MiB compressed) and the models stay out of the bundle', () => {
    expect(size.fitsPaidPlan).toBe(true);
    expect(size.total.gzip).toBeLessThan(10 * MIB);
    const files = size.modules.map((m) => m.file);
    expect(files).toContain('workers.js');
    expect(files.some((f) => f.endsWith('ort-wasm-simd-threaded.wasm'))).toBe(true);
    expect(files.some((f) => f.endsWith('.onnx'))).toBe(false);
    expect(size.assets.largest).toBeLessThan(size.assets.limit);
  });

  const photos = { enrol: photo('cage/cage.jpg'), genuine: photo('cage/cage2_crop.jpg'), impostor: photo('clooney/fragrance-George-Clooney-main_crop.jpg') };
  // The steps share state, so they are one test run in order; a failure names the step.
  it('passes the runtime smoke suite over Hyperdrive to PostgreSQL', async () => {
    for (const step of smokeSuite({ baseUrl: worker.url, adminPassword: ADMIN_PASSWORD }, photos)) {
      try {
        await step.run();
      } catch (error) {
        throw new Error(`${step.name}: ${(error as Error).message}\n--- wrangler output ---\n${worker.output().slice(-4000)}`);
      }
    }
    const info = await (await fetch(`${worker.url}/admin/management/info`, { headers: { authorization: `Basic ${btoa(`admin:${ADMIN_PASSWORD}`)}` } })).json();
    expect(info.node.runtime).toMatch(/^workers/);
    expect(info.database.dialect).toBe('postgres');
    expect(info.workerPool).toMatchObject({ kind: 'inline', workers: 1 });
  }, 240_000);
});
