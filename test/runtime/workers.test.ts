// BIMS on Cloudflare Workers, locally: `npm run build:workers` (wrangler deploy --dry-run, the exact upload)
// must fit the Workers size limits, then that output runs in workerd through `wrangler dev --no-bundle`
// (Miniflare) with Hyperdrive's local connection string on a fresh PostgreSQL database, and passes the
// runtime smoke suite twice: with enrolment, verification and identification extracting inside the isolate
// on onnxruntime-web's compiled wasm module, and with extraction delegated to the Node extraction service
// (BIMS_EXTRACTION_URL). wrangler and Miniflare need Node 22: see scripts/node22.mjs.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgres } from '../support/databases.js';
import { loadConfig } from '../../src/config/config.js';
import { boot } from '../../src/runtime/bootstrap.js';
import { createLogger } from '../../src/logger.js';
import { clearDb } from '../../src/services/subjects/deletes.js';
import { startExtractionService } from '../support/extraction-service.js';
import { serverPort } from '../support/ports.js';
import { smokeSuite } from './smoke/smoke-suite.js';

const root = join(import.meta.dirname, '..', '..');
const ADMIN_PASSWORD = 'workers-smoke-admin-password';
const MIB = 1024 * 1024;
const photo = (path: string) =>
  new Uint8Array(readFileSync(join(root, 'test', 'fixtures', 'photos', 'labelled', path)));

interface SizeReport {
  modules: { file: string; bytes: number; gzip: number }[];
  total: { bytes: number; gzip: number };
  fitsPaidPlan: boolean;
  assets: { files: number; largest: number; limit: number };
}

type Wrangler = { url: string; child: ChildProcess; output: () => string };

/** Start `wrangler dev` on the built Worker and wait for its "Ready on" line (another port if its is taken). */
async function startWrangler(databaseUrl: string, vars: Record<string, string> = {}): Promise<Wrangler> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startWranglerOnce(databaseUrl, vars, await serverPort());
    } catch (error) {
      if (attempt >= 3 || !/Address already in use/.test((error as Error).message)) throw error;
    }
  }
}

function startWranglerOnce(databaseUrl: string, vars: Record<string, string>, port: string): Promise<Wrangler> {
  const node22 = execFileSync(process.execPath, [join(root, 'scripts', 'node22.mjs')], { encoding: 'utf8' }).trim();
  // wrangler is in tools/workers (scripts/tool.mjs installs it on first use), not in the root install.
  const wrangler = execFileSync(
    process.execPath,
    [join(root, 'scripts', 'tool.mjs'), 'workers', 'wrangler/bin/wrangler.js'],
    { encoding: 'utf8' },
  ).trim();
  const child = spawn(
    node22,
    [
      wrangler,
      'dev',
      'dist/cloudflare/workers.js',
      '--no-bundle',
      '--ip',
      '127.0.0.1',
      '--port',
      port,
      '--persist-to',
      '.cache/wrangler-state',
      '--show-interactive-dev-session=false',
      ...Object.entries({ BIMS_ADMIN_PASSWORD: ADMIN_PASSWORD, BIMS_LOG_LEVEL: 'warn', ...vars }).flatMap(([k, v]) => [
        '--var',
        `${k}:${v}`,
      ]),
    ],
    {
      cwd: root,
      env: {
        PATH: process.env.PATH!,
        HOME: process.env.HOME ?? '/tmp',
        WRANGLER_SEND_METRICS: 'false',
        WRANGLER_LOG_PATH: join(root, '.cache', 'wrangler-logs'),
        CLOUDFLARE_HYPERDRIVE_LOCAL_CONNECTION_STRING_HYPERDRIVE: databaseUrl,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
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

const photos = {
  enrol: photo('cage/cage.jpg'),
  genuine: photo('cage/cage2_crop.jpg'),
  impostor: photo('clooney/fragrance-George-Clooney-main_crop.jpg'),
};

/** The smoke suite's steps in order (they share state); a failure names the step and shows wrangler's output. */
async function runSmoke(worker: Awaited<ReturnType<typeof startWrangler>>) {
  for (const step of smokeSuite({ baseUrl: worker.url, adminPassword: ADMIN_PASSWORD }, photos)) {
    try {
      await step.run();
    } catch (error) {
      throw new Error(
        `${step.name}: ${(error as Error).message}\n--- wrangler output ---\n${worker.output().slice(-4000)}`,
      );
    }
  }
  const info = await (
    await fetch(`${worker.url}/admin/management/info`, {
      headers: { authorization: `Basic ${btoa(`admin:${ADMIN_PASSWORD}`)}` },
    })
  ).json();
  expect(info.node.runtime).toMatch(/^workers/);
  expect(info.database.dialect).toBe('postgres');
  return info;
}

/** A fresh database and `wrangler dev` on it; stopped and dropped by the describe's afterAll. */
function workerOnFreshDatabase(vars: () => Record<string, string> = () => ({})) {
  const handle: { worker?: Awaited<ReturnType<typeof startWrangler>>; url?: string; drop?: () => Promise<void> } = {};
  beforeAll(async () => {
    const database = await freshPostgres();
    handle.url = database.url;
    handle.drop = database.drop;
    handle.worker = await startWrangler(withPassword(database.url), vars());
  }, 120_000);
  afterAll(async () => {
    const child = handle.worker?.child;
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await handle.drop?.();
  });
  return handle;
}

describe.skipIf(!process.env.DATABASE_URL)('BIMS on Cloudflare Workers (wrangler dev on the dry-run build)', () => {
  let size: SizeReport;
  beforeAll(() => {
    execFileSync(process.execPath, [join(root, 'scripts', 'build-workers.mjs')], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    size = JSON.parse(readFileSync(join(root, 'dist', 'cloudflare', 'size.json'), 'utf8'));
  }, 240_000);

  it('the upload fits the paid plan (10 MiB compressed) and the models stay out of the bundle', () => {
    expect(size.fitsPaidPlan).toBe(true);
    expect(size.total.gzip).toBeLessThan(10 * MIB);
    const files = size.modules.map((m) => m.file);
    expect(files).toContain('workers.js');
    expect(files.some((f) => f.endsWith('ort-wasm-simd-threaded.wasm'))).toBe(true);
    expect(files.some((f) => f.endsWith('.onnx'))).toBe(false);
    expect(size.assets.largest).toBeLessThan(size.assets.limit);
  });

  describe('extracting inside the isolate', () => {
    const handle = workerOnFreshDatabase();
    it('passes the runtime smoke suite over Hyperdrive to PostgreSQL', async () => {
      const info = await runSmoke(handle.worker!);
      expect(info.workerPool).toMatchObject({ kind: 'inline', workers: 1 });
    }, 240_000);

    it('sees a deletion made by a Node process at its next identification (the gallery change log)', async () => {
      // The isolate's gallery holds the smoke suite's subject; a Node node on the same database deletes it.
      const node = await boot({
        config: loadConfig({
          DATABASE_URL: handle.url!,
          BIMS_ADMIN_PASSWORD: ADMIN_PASSWORD,
          BIMS_LOG_LEVEL: 'silent',
          BIMS_PASSWORD_ITERATIONS: '100000',
        }),
        runtime: 'test',
        hostname: 'node-beside-workers',
        logger: createLogger('silent'),
      });
      try {
        expect(
          (
            await clearDb(node.services, undefined, {
              surface: 'admin',
              principal: { accountId: null, username: 'test', role: 'ADMIN', via: 'basic' },
            })
          ).deleted,
        ).toBe(1);
      } finally {
        await node.close();
      }
      const res = await fetch(`${handle.worker!.url}/admin/operations/create`, {
        method: 'POST',
        headers: { authorization: `Basic ${btoa(`admin:${ADMIN_PASSWORD}`)}`, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'IDENTIFY', faces: [{ image: Buffer.from(photos.genuine).toString('base64') }] }),
      });
      expect(res.status).toBe(201);
      expect((await res.json()).candidates).toEqual([]);
    }, 60_000);
  });

  describe('delegating extraction to the Node extraction service', () => {
    const token = 'workers-extraction-token-0123456789abcdef';
    let service: Awaited<ReturnType<typeof startExtractionService>>;
    beforeAll(async () => {
      service = await startExtractionService(token);
    }, 120_000);
    afterAll(async () => {
      await service?.stop();
    });
    const handle = workerOnFreshDatabase(() => ({ BIMS_EXTRACTION_URL: service.url, BIMS_EXTRACTION_TOKEN: token }));
    it('passes the runtime smoke suite with no model in the isolate', async () => {
      const info = await runSmoke(handle.worker!);
      expect(info.workerPool).toMatchObject({ kind: 'remote' });
    }, 240_000);
  });
});
