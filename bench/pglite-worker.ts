// npm run bench -- pglite-worker [--seconds 5] [--rounds 3] [--connections 8] [--subjects 5000]
//
// Issue 18: does running PGlite in a worker thread free the event loop for HTTP? Two small Hono servers on
// @hono/node-server answer GET /subject/:id with one PGlite statement (a subject row as json_build_object plus
// an aggregate of its samples, over a table of --subjects rows with 3 samples each) and GET /health with no
// statement:
//   main:   PGlite on the event loop, as BIMS runs it today;
//   worker: PGlite in a worker_threads Worker; the server posts { sql, params } and awaits the rows.
// (@electric-sql/pglite/worker is written for browsers: it needs a global Worker and navigator.locks for its
// leader election, neither of which Node 20 has, hence the small message protocol here.)
// Each server is its own process (this file, started with `--serve main|worker`), as is the baseline, a bare
// Hono hello-world (bench/hello-server.ts). Phases alternate hello, main, hello, worker, hello, main-mixed,
// hello, worker-mixed, hello per round; "mixed" gives half the connections to /subject/:id and half to /health
// (the cheap request, like a read answered from memory, that a worker could keep from queueing behind the
// engine). Each ratio divides by the mean of the hello phases either
// side of it, so a machine whose load drifts moves both alike.
// JSON on stdout: per variant and round requests/s, ratio to hello, p50/p99 latency (per kind when mixed),
// and the server process's CPU ms per request (all threads, and its main thread alone).
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';
import { type ListeningProcess, startListening } from './listening-process.js';
import { percentiles } from './percentiles.js';

const root = join(import.meta.dirname, '..');
const SELF = import.meta.filename;

const SCHEMA = `
  create table subject (
    id serial primary key, subject_id text not null unique, display_name text not null,
    status text not null, revision int not null default 0, created_at timestamptz not null default now());
  create table sample (
    id serial primary key, subject_id int not null references subject(id), modality text not null,
    quality real not null, created_at timestamptz not null default now());
  create index on sample (subject_id);`;
const SEED = `
  insert into subject (subject_id, display_name, status)
    select 'subject-' || i, 'Person ' || i, case when i % 7 = 0 then 'PENDING' else 'ENROLLED' end
    from generate_series(1, $1::int) i;
  insert into sample (subject_id, modality, quality)
    select s.id, m, (s.id * 37 % 100) / 100.0 from subject s, unnest(array['FACE','FACE','VOICE']) m;
  analyze;`;
/** One subject as the API would show it: the row and a summary of its samples. */
const READ = `
  select json_build_object(
    'subjectId', s.subject_id, 'displayName', s.display_name, 'status', s.status, 'revision', s.revision,
    'createdAt', s.created_at,
    'samples', (select json_build_object('count', count(*), 'faces', count(*) filter (where modality = 'FACE'),
                                          'bestQuality', max(quality))
                from sample where subject_id = s.id)) as subject
  from subject s where s.subject_id = $1`;

type Query = (sql: string, params: unknown[]) => Promise<Record<string, unknown>[]>;

async function openPglite(subjects: number): Promise<Query> {
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create();
  await db.exec(SCHEMA);
  // exec takes no parameters; the seed's one number is formatted in.
  await db.exec(SEED.replace('$1::int', String(Math.trunc(subjects))));
  return async (sql, params) => (await db.query<Record<string, unknown>>(sql, params)).rows;
}

/** The worker's side: answer { id, sql, params } with { id, rows } or { id, error }. */
async function workerMain() {
  const query = await openPglite(workerData.subjects);
  parentPort!.on('message', async (m: { id: number; sql: string; params: unknown[] }) => {
    try {
      parentPort!.postMessage({ id: m.id, rows: await query(m.sql, m.params) });
    } catch (e) {
      parentPort!.postMessage({ id: m.id, error: String(e) });
    }
  });
  parentPort!.postMessage({ ready: true });
}

/** The server's side of the worker: a query function whose statements run on the worker thread. */
async function openWorker(subjects: number): Promise<Query> {
  // A worker thread does not inherit tsx's loader on Node 20: register it inside the thread (as
  // workers/matcher.worker.dev.mjs does), then load this TypeScript file.
  const bootstrap = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})
    .then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const worker = new Worker(bootstrap, { eval: true, workerData: { role: 'pglite', subjects } });
  const pending = new Map<number, { resolve: (r: Record<string, unknown>[]) => void; reject: (e: Error) => void }>();
  let next = 0;
  await new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', () => resolve());
  });
  worker.on('message', (m: { id: number; rows?: Record<string, unknown>[]; error?: string }) => {
    const p = pending.get(m.id)!;
    pending.delete(m.id);
    if (m.error !== undefined) p.reject(new Error(m.error));
    else p.resolve(m.rows!);
  });
  return (sql, params) =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, sql, params });
    });
}

async function serveMain(variant: string, subjects: number) {
  const { serve } = await import('@hono/node-server');
  const { Hono } = await import('hono');
  const query = variant === 'worker' ? await openWorker(subjects) : await openPglite(subjects);
  const app = new Hono();
  app.get('/health', (c) => c.json({ status: 'UP' }));
  app.get('/subject/:id', async (c) => {
    const rows = await query(READ, [c.req.param('id')]);
    return rows[0] ? c.json(rows[0].subject as object) : c.json({ title: 'not found' }, 404);
  });
  serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
    console.log(`listening http://127.0.0.1:${info.port}`),
  );
}

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

type Server = ListeningProcess;
const start = startListening;

/** CPU ms (user + system) of a process: all its threads, and its main thread (the event loop) alone. */
function cpuOf(pid: number): { total: number; main: number } {
  const ms = (stat: string) => {
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10; // USER_HZ 100
  };
  let total = 0;
  let main = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const t = ms(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
      total += t;
      if (Number(tid) === pid) main = t;
    } catch {
      // the thread ended between the listing and the read
    }
  }
  // Threads that ended earlier are counted in the process's own figure; take the larger.
  return { total: Math.max(total, ms(readFileSync(`/proc/${pid}/stat`, 'utf8'))), main };
}

type Kind = 'hello' | 'subject' | 'health';

/** Requests of one kind on their own connections: a mixed phase runs two such groups at once. */
type Group = { kind: Kind; path: string; connections: number };

/**
 * One phase: an autocannon instance per group, all at once against the server of `pid`. Each group keeps its
 * own connections, so a cheap request never waits for a slow one on its connection: what it waits for is the
 * server's event loop, the thing a worker thread could free.
 */
async function phase(url: string, seconds: number, groups: Group[], pid: number) {
  const before = cpuOf(pid);
  const runs = await Promise.all(
    groups.map(async (g) => {
      let ids = 0;
      const times: number[] = [];
      const instance = autocannon({
        url,
        connections: g.connections,
        duration: seconds,
        requests: [
          {
            // Subject ids cycle over the first 1,000 subjects.
            setupRequest: (request) => ({ ...request, path: g.path.replace(':id', `subject-${(ids++ % 1000) + 1}`) }),
          },
        ],
      });
      instance.on('response', (_client, status, _bytes, ms) => {
        if (status === 200) times.push(ms);
      });
      const result = await instance;
      return { kind: g.kind, times, result };
    }),
  );
  const after = cpuOf(pid);
  const duration = Math.max(...runs.map((r) => r.result.duration));
  const all = runs.flatMap((r) => r.times);
  const n = all.length || 1;
  const overall = percentiles(all, duration);
  const round = (x: number) => Number(x.toFixed(4));
  return {
    requestsPerSecond: overall.requestsPerSecond,
    latencyMs: { p50: overall.latencyMs.p50, p99: overall.latencyMs.p99 },
    cpuMsPerRequest: round((after.total - before.total) / n),
    mainThreadCpuMsPerRequest: round((after.main - before.main) / n),
    errors: runs.reduce((e, r) => e + r.result.errors + r.result.timeouts + r.result.non2xx, 0),
    ...(runs.length > 1
      ? {
          perKind: Object.fromEntries(
            runs.map((r) => {
              const p = percentiles(r.times, r.result.duration);
              return [r.kind, { requestsPerSecond: p.requestsPerSecond, p50: p.latencyMs.p50, p99: p.latencyMs.p99 }];
            }),
          ),
        }
      : {}),
  };
}

export async function run(args: string[]) {
  const seconds = option(args, 'seconds', 5);
  const rounds = option(args, 'rounds', 3);
  const connections = option(args, 'connections', 8);
  const subjects = option(args, 'subjects', 5000);
  const loadBefore = loadavg()[0]!;
  // Started together, so that one failing to start still lets the finally below stop the others.
  const started = await Promise.allSettled([
    start([join(root, 'bench', 'hello-server.ts')]),
    start([SELF, '--serve', 'main', String(subjects)]),
    start([SELF, '--serve', 'worker', String(subjects)]),
  ]);
  try {
    const [hello, main, worker] = started.map((s) => {
      if (s.status === 'rejected') throw s.reason;
      return s.value;
    }) as [Server, Server, Server];
    const servers = { main, worker };
    // A check that both answer the same subject, and a warm-up of each (JIT, PGlite's plan cache).
    for (const s of Object.values(servers)) {
      const res = await fetch(`${s.url}/subject/subject-7`);
      const body = await res.json();
      if (res.status !== 200 || body.subjectId !== 'subject-7' || body.samples.count !== 3)
        throw new Error(`unexpected answer ${res.status} ${JSON.stringify(body)}`);
      await phase(s.url, 1, [{ kind: 'subject', path: '/subject/:id', connections }], s.pid);
    }
    await phase(hello.url, 1, [{ kind: 'hello', path: '/', connections }], hello.pid);

    const subject = (c: number): Group => ({ kind: 'subject', path: '/subject/:id', connections: c });
    const half = Math.max(1, Math.floor(connections / 2));
    const mixed = [subject(half), { kind: 'health', path: '/health', connections: connections - half } as Group];
    const variants = [
      { name: 'main', server: servers.main, groups: [subject(connections)] },
      { name: 'worker', server: servers.worker, groups: [subject(connections)] },
      { name: 'main-mixed', server: servers.main, groups: mixed },
      { name: 'worker-mixed', server: servers.worker, groups: mixed },
    ];
    const helloPhase = () => phase(hello.url, seconds, [{ kind: 'hello', path: '/', connections }], hello.pid);
    const results: Record<string, unknown[]> = Object.fromEntries(variants.map((v) => [v.name, []]));
    const hellos: unknown[] = [];
    for (let r = 0; r < rounds; r++) {
      let before = await helloPhase();
      hellos.push(before);
      for (const v of variants) {
        const measured = await phase(v.server.url, seconds, v.groups, v.server.pid);
        const after = await helloPhase();
        hellos.push(after);
        const helloRate = (before.requestsPerSecond + after.requestsPerSecond) / 2;
        const helloCpu = (before.cpuMsPerRequest + after.cpuMsPerRequest) / 2;
        results[v.name]!.push({
          ratioToHello: Number((measured.requestsPerSecond / helloRate).toFixed(4)),
          cpuRatioToHello: Number((helloCpu / measured.cpuMsPerRequest).toFixed(4)),
          ...measured,
        });
        before = after;
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const summary = Object.fromEntries(
      Object.entries(results).map(([name, list]) => {
        const l = list as { ratioToHello: number; cpuMsPerRequest: number; mainThreadCpuMsPerRequest: number }[];
        return [
          name,
          {
            ratioToHello: median(l.map((x) => x.ratioToHello)),
            cpuMsPerRequest: median(l.map((x) => x.cpuMsPerRequest)),
            mainThreadCpuMsPerRequest: median(l.map((x) => x.mainThreadCpuMsPerRequest)),
          },
        ];
      }),
    );
    return {
      seconds,
      rounds,
      connections,
      subjects,
      loadAverage1m: { before: Number(loadBefore.toFixed(2)), after: Number(loadavg()[0]!.toFixed(2)) },
      medianOfRounds: summary,
      perRound: results,
      hello: hellos,
    };
  } finally {
    for (const s of started) if (s.status === 'fulfilled') s.value.stop();
  }
}

// Started as a server process (`--serve main|worker <subjects>`) or as the PGlite worker thread.
if (!isMainThread && workerData?.role === 'pglite') await workerMain();
else if (process.argv[1] === SELF && process.argv[2] === '--serve')
  await serveMain(process.argv[3]!, Number(process.argv[4]));
