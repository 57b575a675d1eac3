// A gallery past one machine, measured (issue 35): `npm run bench -- scale [--templates 10000000] [--shards 4]
//   [--overhead-templates 1000000] [--probes 200] [--pairs 100]`. JSON on stdout, progress on stderr.
// 1. A fresh PostgreSQL database of its own (dropped at the end), filled with --overhead-templates generated
//    face templates (one ENROLLED subject each, distinct random embeddings; COPY through psql).
// 2. Overhead at that size, alternated probe by probe in one run: the in-process gallery (GalleryCache in this
//    process, one thread) against a one-shard matcher cluster holding the same templates (a `bims matcher`
//    process, one thread, over a nats-server of its own), queried as an API node does (ShardedGallery: the change
//    log's position read, the probe sent over NATS, the answer merged). Same probes, same answers asserted.
// 3. The database grown to --templates, then --shards matcher processes (one shard each, loading at once):
//    each one's load time and resident memory, and IDENTIFY's gallery part (ShardedGallery.identify, top 10)
//    at that size: median and p99 over --probes probes, half of them near a stored template (its subject must
//    come first), half strangers. `--templates` no larger than `--overhead-templates` stops after step 2.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { sql } from 'kysely';
import { connect } from 'nats';
import { loadConfig } from '../src/config/config.js';
import { connectDatabase, migrate, type DatabaseHandle } from '../src/db/connect.js';
import { latestGalleryChangeId } from '../src/db/repositories/gallery.js';
import type { ServiceContext } from '../src/services/context.js';
import { GalleryCache } from '../src/services/gallery/gallery-cache.js';
import { MatcherCluster } from '../src/services/gallery/sharded/matcher-cluster.js';
import { ShardedGallery } from '../src/services/gallery/sharded/sharded-gallery.js';
import { createLogger } from '../src/logger.js';
import { FACE_CALIBRATION } from '../src/biometrics/calibration.js';
import { encodeTemplate } from '../src/biometrics/template.js';
import { faceTemplate, generatedEmbedding, randomStream } from '../test/support/generated-gallery.js';
import { killHard, startMatcher, type MatcherProcess } from '../test/support/matcher-process.js';
import { startNatsCluster } from '../test/support/nats-cluster.js';

const log = (line: string) => process.stderr.write(`[scale] ${line}\n`);
const round = (n: number, d = 1) => Number(n.toFixed(d));
const median = (xs: number[]) => quantile(xs, 0.5);
function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]! : 0;
}

/**
 * Row i's quantised embedding, from its own seed (so a probe near any stored row can be made again without keeping
 * the rows): 128 xorshift32 steps give the 512 int8 components (-128 moved to -127, the quantiser's range).
 */
function rowComponents(i: number): Int8Array {
  let s = (Math.imul(i + 1, 0x9e3779b1) ^ 0x5eed) >>> 0 || 1;
  const words = new Uint32Array(128);
  for (let k = 0; k < 128; k++) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    words[k] = s;
  }
  const q = new Int8Array(words.buffer);
  for (let k = 0; k < 512; k++) if (q[k] === -128) q[k] = -127;
  return q;
}

/** Row i's template bytes. */
const rowTemplate = (i: number) =>
  encodeTemplate({
    templateVersion: FACE_CALIBRATION.templateVersion,
    records: [{ modality: 'face', quality: null, q: rowComponents(i), scale: 1 / 127 }],
  });

/** Row i's embedding as floats (to make a probe near it). */
const embeddingOf = (i: number) => Float32Array.from(rowComponents(i), (v) => v / 127);

/** Append subjects from..to-1 (`scale-i`) with one face template each: subjects in SQL, templates by COPY. */
async function grow(h: DatabaseHandle, url: string, from: number, to: number): Promise<number> {
  const t0 = performance.now();
  const { rows } = await sql<{ first: number }>`
    with made as (
      insert into subjects (subject_id, status, template_version)
      select 'scale-' || g, 'ENROLLED', 'gen' from generate_series(${from}::int, ${to - 1}::int) g returning id
    ) select min(id)::int as first from made`.execute(h.db);
  const firstRef = rows[0]!.first;
  // The revision triggers (the subject read model's) and the foreign-key checks are off for this session only:
  // this is the gallery's data, written once by the benchmark.
  const copy = spawn(
    'psql',
    [
      url,
      '-q',
      '-v',
      'ON_ERROR_STOP=1',
      '-c',
      'set session_replication_role = replica',
      '-c',
      'copy face_samples (subject_ref, operation_uuid, rectangle, template_version, template) from stdin',
    ],
    { stdio: ['pipe', 'inherit', 'inherit'] },
  );
  const done = new Promise<void>((resolve, reject) =>
    copy.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`psql copy exited ${code}`)))),
  );
  const uuid = crypto.randomUUID();
  const CHUNK = 5000;
  for (let at = from; at < to; at += CHUNK) {
    let text = '';
    for (let i = at; i < Math.min(to, at + CHUNK); i++) {
      const hex = Buffer.from(rowTemplate(i)).toString('hex');
      text += `${firstRef + (i - from)}\t${uuid}\t{}\tgen\t\\\\x${hex}\n`;
    }
    if (!copy.stdin.write(text)) await new Promise((resolve) => copy.stdin.once('drain', resolve));
    if ((at - from) % 500_000 === 0) log(`  ${at.toLocaleString()} of ${to.toLocaleString()} written`);
  }
  copy.stdin.end();
  await done;
  await sql`analyze subjects`.execute(h.db);
  await sql`analyze face_samples`.execute(h.db);
  return (performance.now() - t0) / 1000;
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024);
}

export async function run(args: string[]) {
  const arg = (name: string, dflt: number) => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args[i + 1]) : dflt;
  };
  const total = arg('--templates', 10_000_000);
  const shards = arg('--shards', 4);
  const small = arg('--overhead-templates', 1_000_000);
  const probes = arg('--probes', 200);
  const pairs = arg('--pairs', 100);
  const load = { start: loadavg()[0], max: loadavg()[0] };
  // The machine is shared: the highest one-minute load average seen, sampled every 10 s, goes with the figures.
  const sampler = setInterval(() => (load.max = Math.max(load.max, loadavg()[0]!)), 10_000);
  sampler.unref();

  const base = process.env.DATABASE_URL
    ? process.env.DATABASE_URL
    : execFileSync('bash', [join(import.meta.dirname, '..', 'scripts', 'ensure-postgres.sh'), 'postgres'], {
        encoding: 'utf8',
      }).trim();
  const name = `bims_scale_${process.pid}`;
  const adminUrl = new URL(base);
  adminUrl.pathname = '/postgres';
  const admin = await connectDatabase({ url: adminUrl.toString() });
  await sql.raw(`create database ${name}`).execute(admin.db);
  const dbUrl = new URL(base);
  dbUrl.pathname = `/${name}`;
  const url = dbUrl.toString();
  const h = await connectDatabase({ url });
  const nats = await startNatsCluster(1);
  const matchers: MatcherProcess[] = [];
  const clients: { close(): Promise<void> }[] = [];
  const quiet = createLogger('silent');
  const ctx: ServiceContext = {
    db: h.db,
    dialect: 'postgres',
    config: loadConfig({ DATABASE_URL: url }),
    log: quiet,
    now: () => new Date(),
    startedAt: new Date(),
    node: { id: 'bench', hostname: 'bench', runtime: 'bench', version: 'bench' },
  };
  const clusterOf = async (count: number, timeoutMs: number) => {
    const nc = await connect({ servers: nats.urls, name: 'bench-api' });
    clients.push(nc);
    return new ShardedGallery(ctx, new MatcherCluster(nc, { shards: count, prefix: 'scale', timeoutMs, log: quiet }));
  };
  const matcherEnv = (count: number) => ({
    DATABASE_URL: url,
    BIMS_NATS_URL: nats.urls,
    BIMS_NATS_PREFIX: 'scale',
    BIMS_MATCHER_SHARDS: String(count),
    BIMS_MATCHER_THREADS: '1',
    BIMS_GALLERY_RECONCILE_SECONDS: '0',
    NODE_OPTIONS: '--max-old-space-size=8192',
  });
  try {
    await migrate(h.db);
    // ---- 2. the scatter-gather's own cost at `small` templates, alternated with the in-process gallery ----
    log(`writing ${small.toLocaleString()} templates`);
    const smallSeconds = await grow(h, url, 0, small);
    log(`  in ${round(smallSeconds)} s; loading them here and in one matcher process`);
    const one = startMatcher([0], matcherEnv(1), { startupMs: 3_600_000 });
    matchers.push(one);
    const inProcess = new GalleryCache(ctx);
    await Promise.all([inProcess.ready(), one.ready]);
    const cluster1 = await clusterOf(1, 60_000);
    const next = randomStream(35);
    const overhead = { inProcessMs: [] as number[], clusterMs: [] as number[], differences: 0 };
    // Where the cluster's extra time goes, timed in the same pairs: the change-log read a search starts with (one
    // PostgreSQL round trip), and a NATS request the shard answers without a scan (a 1:1 of an absent subject).
    const hops = { changeLogReadMs: [] as number[], natsRoundTripMs: [] as number[] };
    for (let p = -3; p < pairs; p++) {
      const probe = faceTemplate(p % 2 ? embeddingOf(Math.floor((next() + 0.5) * small)) : generatedEmbedding(next));
      const options = { topK: 10, threshold: 0 };
      // Alternated, and which goes first alternates too.
      const order = p % 2 ? (['a', 'b'] as const) : (['b', 'a'] as const);
      const got: Record<string, unknown> = {};
      for (const side of order) {
        const t0 = performance.now();
        got[side] = side === 'a' ? await inProcess.identify(probe, options) : await cluster1.identify(probe, options);
        const ms = performance.now() - t0;
        if (p >= 0) (side === 'a' ? overhead.inProcessMs : overhead.clusterMs).push(ms);
      }
      if (JSON.stringify(normal(got.a)) !== JSON.stringify(normal(got.b))) overhead.differences++;
      const t1 = performance.now();
      await latestGalleryChangeId(h.db);
      const t2 = performance.now();
      await cluster1.cluster.verify(probe, 2 ** 31 - 1, 0);
      const t3 = performance.now();
      if (p >= 0) {
        hops.changeLogReadMs.push(t2 - t1);
        hops.natsRoundTripMs.push(t3 - t2);
      }
    }
    const perPair = overhead.clusterMs.map((ms, i) => ms - overhead.inProcessMs[i]!);
    const oneRss = rssMiB(one.child.pid!);
    await killHard(one);
    inProcess.forget();
    const overheadAt = {
      templates: small,
      pairs,
      how: 'GalleryCache.identify in this process vs ShardedGallery.identify to one matcher process holding the same templates (one thread each), top 10, alternated probe by probe',
      inProcessMs: { median: round(median(overhead.inProcessMs)), p99: round(quantile(overhead.inProcessMs, 0.99)) },
      clusterMs: { median: round(median(overhead.clusterMs)), p99: round(quantile(overhead.clusterMs, 0.99)) },
      overheadMs: { median: round(median(perPair)), p90: round(quantile(perPair, 0.9)) },
      parts: {
        changeLogReadMs: {
          median: round(median(hops.changeLogReadMs)),
          p90: round(quantile(hops.changeLogReadMs, 0.9)),
        },
        natsRoundTripMs: {
          median: round(median(hops.natsRoundTripMs)),
          p90: round(quantile(hops.natsRoundTripMs, 0.9)),
        },
      },
      listsThatDiffered: overhead.differences,
      // Shards asked again because they answered from before the change-log position read with the search.
      reasked: cluster1.cluster.stale,
      oneShardRssMiB: oneRss,
    };
    const machine = () => ({
      cpus: cpus().length,
      model: cpus()[0]?.model,
      loadAverage: { ...load, end: loadavg()[0] },
    });
    // --templates no larger than --overhead-templates: the overhead alone.
    if (total <= small) return { machine: machine(), overheadAt };

    // ---- 3. the whole gallery over `shards` matcher processes ----
    log(`growing the database to ${total.toLocaleString()} templates`);
    const bigSeconds = await grow(h, url, small, total);
    log(`  in ${round(bigSeconds)} s; starting ${shards} matcher processes`);
    const t0 = performance.now();
    const held = Array.from({ length: shards }, (_, s) =>
      startMatcher([s], matcherEnv(shards), { startupMs: 3_600_000 }),
    );
    matchers.push(...held);
    const ready = await Promise.all(held.map((m) => m.ready));
    const allLoadedSeconds = (performance.now() - t0) / 1000;
    // A process's own memory without a gallery: shard 0 of the largest layout holds 1/32768 of the templates.
    const empty = startMatcher([0], matcherEnv(32_768), { startupMs: 600_000 });
    matchers.push(empty);
    const emptyTemplates = Number((await empty.ready).templates);
    const baselineRss = rssMiB(empty.child.pid!);
    await killHard(empty);
    const perShard = ready.map((r, s) => {
      const templates = Number(r.templates);
      const rss = rssMiB(held[s]!.child.pid!);
      return {
        shard: s,
        templates,
        loadSeconds: round(Number(r.loadMs) / 1000),
        templatesPerSecond: Math.round(templates / (Number(r.loadMs) / 1000)),
        rssMiB: rss,
        rssMiBPerMillion: Math.round(rss / (templates / 1e6)),
        aboveBaselineMiBPerMillion: Math.round((rss - baselineRss) / (templates / 1e6)),
      };
    });
    log(`  loaded in ${round(allLoadedSeconds)} s; ${probes} identifications`);
    const clusterN = await clusterOf(shards, 60_000);
    const times: number[] = [];
    let nearFirst = 0;
    let near = 0;
    for (let p = -3; p < probes; p++) {
      const row = Math.floor((next() + 0.5) * total);
      const isNear = p % 2 === 0;
      const probe = faceTemplate(isNear ? generatedEmbedding(next, embeddingOf(row)) : generatedEmbedding(next));
      const t1 = performance.now();
      const found = await clusterN.identify(probe, { topK: 10, threshold: 0 });
      if (p < 0) continue;
      times.push(performance.now() - t1);
      if (p % 50 === 0) log(`  ${p} of ${probes}`);
      if (isNear) {
        near++;
        if (found[0]?.subjectId === `scale-${row}`) nearFirst++;
      }
    }
    return {
      machine: machine(),
      overheadAt,
      scale: {
        templates: total,
        shards,
        writeSeconds: round(smallSeconds + bigSeconds),
        allShardsLoadedSeconds: round(allLoadedSeconds),
        baseline: { rssMiB: baselineRss, templates: emptyTemplates, how: 'a matcher holding shard 0 of 32768' },
        perShard,
        identifyMs: {
          probes,
          median: round(median(times)),
          p99: round(quantile(times, 0.99)),
          max: round(Math.max(...times)),
        },
        nearProbesFoundFirst: `${nearFirst} of ${near}`,
        how: `${shards} bims matcher processes (one shard each, one thread each, loading at once) on this machine; ShardedGallery.identify (change-log position + scatter-gather over NATS + merge), top 10, sequential`,
      },
    };
  } finally {
    clearInterval(sampler);
    await Promise.all(matchers.map((m) => killHard(m)));
    await Promise.all(clients.map((c) => c.close()));
    await nats.stop();
    await h.close();
    await sql.raw(`drop database if exists ${name} with (force)`).execute(admin.db);
    await admin.close();
  }
}

/** A candidate list with the fields both sides name, in one key order (the sides build their objects apart). */
function normal(list: unknown): unknown {
  return (list as { subjectRef: number; cosine: number; score: number }[]).map((c) => [
    c.subjectRef,
    c.cosine,
    c.score,
  ]);
}
