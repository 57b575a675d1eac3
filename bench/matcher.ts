// Matcher speed against a native baseline, in one run, alternated round by round (the machine is shared).
//   npm run bench -- matcher [--rows 1000000] [--rounds 7] [--threads N] [--no-db]
// - native: bench/matcher-native.c built now with the system compiler (cc -O3 -march=native), one thread, the
//   plain AVX2 int8->int16 multiply-add loop over the same rows and probe (same xorshift32 stream); its checksum
//   (sum of all scores) must equal the wasm kernels', so both did the same work.
// - wasm kernels, one thread: the SIMD kernel and (where the runtime validates it) the relaxed-SIMD one, over
//   every row; ratio = native ms / wasm ms per round, i.e. the kernel's speed as a share of native on one core.
// - 1:N (topK 10) over the same rows: FaceGallery.identify on this thread and identifyAsync on the matcher
//   threads (SharedArrayBuffer gallery split across them, top-K merged).
// - memory per million templates (the partition's memories and the process's growth while filling it) and,
//   unless --no-db, the time to load 1M templates from PostgreSQL the way the gallery cache loads them at start
//   (keyset pages of 2000 face samples of ENROLLED subjects, parsed and added), on a fresh database.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setFlagsFromString } from 'node:v8';
import { DotKernel, kernelModules, relaxedStatus, type KernelChoice } from '../src/biometrics/matcher-dots.js';
import { MatcherPool } from '../src/biometrics/node-matcher-pool.js';
import { RowStore } from '../src/biometrics/matcher-store.js';
import { FaceGallery } from '../src/biometrics/face-gallery.js';

const DIMS = 512;
const SEED = 1234;

/** The xorshift32 byte stream of matcher-native.c. */
function byteStream(seed: number) {
  let s = seed >>> 0;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return ((s >>> 24) << 24) >> 24;
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
};
const round2 = (x: number) => Math.round(x * 100) / 100;
const load = () => loadavg().map(round2);

interface Native {
  run(): Promise<{ ms: number; checksum: number }>;
  close(): void;
}

/** Builds and starts the native baseline; null (with the reason) when there is no compiler or it fails. */
async function startNative(rows: number): Promise<{ native: Native | null; info: Record<string, unknown> }> {
  const cc = process.env.CC ?? 'cc';
  const flags = ['-O3', '-march=native', `-DDIMS=${DIMS}`];
  const which = spawnSync(cc, ['--version'], { encoding: 'utf8' });
  if (which.error || which.status !== 0)
    return {
      native: null,
      info: { available: false, reason: `no C compiler (${cc}) on this machine: native baseline not measured` },
    };
  const dir = mkdtempSync(join(tmpdir(), 'bims-matcher-'));
  const exe = join(dir, 'matcher-native');
  try {
    execFileSync(cc, [...flags, '-o', exe, join(import.meta.dirname, 'matcher-native.c')], { stdio: 'pipe' });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    return {
      native: null,
      info: {
        available: false,
        reason: `${cc} failed: ${String((e as { stderr?: Buffer }).stderr ?? e).slice(0, 300)}`,
      },
    };
  }
  const child = spawn(exe, [String(rows), String(SEED)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const waiting: ((line: string) => void)[] = [];
  lines.on('line', (l) => waiting.shift()?.(l));
  const next = () => new Promise<string>((resolve) => waiting.push(resolve));
  await next(); // "ready"
  const native: Native = {
    async run() {
      const reply = next();
      child.stdin.write('run\n');
      return JSON.parse(await reply);
    },
    close() {
      child.stdin.end();
      child.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return {
    native,
    info: {
      available: true,
      compiler: which.stdout.split('\n')[0],
      command: `${cc} ${flags.join(' ')}`,
      loop: 'AVX2 vpmovsxbw + vpmaddwd + vpaddd, 16 bytes per step, one thread',
    },
  };
}

/** Times one kernel over every row of the store; returns ms and the checksum of all scores. */
function scanAll(kernel: DotKernel, probe: Int8Array, rows: number) {
  const t0 = performance.now();
  kernel.setProbe(probe);
  let sum = 0;
  for (let start = 0; start < rows; start += 16384) {
    const n = Math.min(16384, rows - start);
    const d = kernel.dots(start, n);
    for (let i = 0; i < n; i++) sum += d[i];
  }
  return { ms: performance.now() - t0, checksum: sum };
}

async function databaseLoad(rows: number): Promise<Record<string, unknown>> {
  const { connectDatabase, migrate } = await import('../src/db/connect.js');
  const { sql } = await import('kysely');
  const { encodeTemplate } = await import('../src/biometrics/template.js');
  const { FACE_CALIBRATION } = await import('../src/biometrics/calibration.js');
  const { Gallery } = await import('../src/biometrics/gallery.js');
  const url = process.env.DATABASE_URL
    ? process.env.DATABASE_URL
    : execFileSync('bash', [join(import.meta.dirname, '..', 'scripts', 'ensure-postgres.sh'), 'postgres'], {
        encoding: 'utf8',
      }).trim();
  // a fresh database of that server, dropped afterwards
  const name = `bims_matcher_${process.pid}`;
  const adminUrl = new URL(url);
  adminUrl.pathname = '/postgres';
  const admin = await connectDatabase({ url: adminUrl.toString() });
  await sql.raw(`CREATE DATABASE ${name}`).execute(admin.db);
  const u = new URL(url);
  u.pathname = `/${name}`;
  const h = await connectDatabase({ url: u.toString() });
  try {
    await migrate(h.db);
    const next = byteStream(SEED);
    const e = new Float32Array(DIMS);
    for (let k = 0; k < DIMS; k++) e[k] = next();
    // Every sample holds the same template bytes: the load reads, parses and adds each row all the same.
    const template = encodeTemplate({
      templateVersion: FACE_CALIBRATION.templateVersion,
      records: [{ modality: 'face', embedding: e }],
    });
    const t0 = performance.now();
    await sql`INSERT INTO subjects (subject_id, status) SELECT 'bench-' || g, 'ENROLLED' FROM generate_series(1, ${rows}) g`.execute(
      h.db,
    );
    await sql`INSERT INTO face_samples (subject_ref, operation_uuid, rectangle, template_version, template)
      SELECT s.id, gen_random_uuid(), '{"x":0,"y":0,"width":1,"height":1}'::jsonb, ${FACE_CALIBRATION.templateVersion}, ${template} FROM subjects s`.execute(
      h.db,
    );
    await sql`ANALYZE`.execute(h.db);
    const insertMs = performance.now() - t0;
    const rssBefore = process.memoryUsage().rss;
    const t1 = performance.now();
    const gallery = new Gallery();
    let after = 0;
    let loaded = 0;
    for (;;) {
      const page = await h.db
        .selectFrom('face_samples as f')
        .innerJoin('subjects as s', 's.id', 'f.subject_ref')
        .select(['f.id', 'f.template', 's.id as subjectRef', 's.subject_id'])
        .where('s.status', '=', 'ENROLLED')
        .where('f.template', 'is not', null)
        .where('f.id', '>', after)
        .orderBy('f.id')
        .limit(2000)
        .execute();
      for (const r of page) gallery.add(String(r.subjectRef), r.template as Uint8Array);
      loaded += page.length;
      if (page.length < 2000) break;
      after = page[page.length - 1]!.id;
    }
    const loadMs = performance.now() - t1;
    return {
      templates: loaded,
      insertSeconds: round2(insertMs / 1000),
      loadSeconds: round2(loadMs / 1000),
      templatesPerSecond: Math.round(loaded / (loadMs / 1000)),
      rssGrowthMiB: Math.round((process.memoryUsage().rss - rssBefore) / 2 ** 20),
      how: "keyset pages of 2000 face samples joined to ENROLLED subjects (the gallery cache's query), parse + Gallery.add, this thread",
    };
  } finally {
    await h.close();
    await sql.raw(`DROP DATABASE IF EXISTS ${name}`).execute(admin.db);
    await admin.close();
  }
}

/**
 * 1:N speed of FaceGallery.identify on random rows at each size (one thread), for other benches' summaries.
 * @param kernels 'auto' (the gallery's default kernel) and/or 'js' (the fallback, measured up to 100k rows).
 */
export async function matcherBench(sizes: number[], kernels: ('auto' | 'js')[] = ['auto', 'js']) {
  const out: Record<string, unknown>[] = [];
  for (const kernel of kernels) {
    for (const n of sizes) {
      if (kernel === 'js' && n > 100_000) continue;
      const g = new FaceGallery('bench', DIMS, { kernel });
      const next = byteStream(SEED);
      const q = new Int8Array(DIMS);
      for (let i = 0; i < n; i++) {
        for (let k = 0; k < DIMS; k++) q[k] = next();
        g.add(`s${i}`, q);
      }
      const probes = Array.from({ length: 5 }, () => Int8Array.from({ length: DIMS }, () => next()));
      g.identify(probes[0], { topK: 10 }); // warm
      const reps = Math.max(3, Math.ceil(2e6 / n));
      const t0 = performance.now();
      for (let i = 0; i < reps; i++) g.identify(probes[i % probes.length], { topK: 10 });
      const ms = (performance.now() - t0) / reps;
      out.push({
        kernel: g.kernel,
        gallery: n,
        msPerSearch: round2(ms),
        comparisonsPerSecond: Math.round((n / ms) * 1000),
      });
    }
  }
  return out;
}

export async function run(args: string[]) {
  // Node 20's V8 has relaxed SIMD behind a flag (on by default from Node 22): turned on before any kernel is
  // compiled, so the relaxed kernel is measured too; the service uses it wherever the runtime validates it.
  setFlagsFromString('--experimental-wasm-relaxed-simd');
  const arg = (name: string, dflt: number) => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args[i + 1]) : dflt;
  };
  const rows = arg('--rows', 1_000_000);
  const rounds = arg('--rounds', 7);
  const threads = arg('--threads', availableParallelism());
  const loadAtStart = load();

  const { native, info: nativeInfo } = await startNative(rows);

  // The rows once in a partition store (kernel timings), once in a threaded FaceGallery (1:N timings).
  const next = byteStream(SEED);
  const store = new RowStore(DIMS, 1, true);
  const pool = new MatcherPool(threads, { minRows: 0 });
  const rssBefore = process.memoryUsage().rss;
  const gallery = new FaceGallery('bench', DIMS, { threads: pool });
  const q = new Int8Array(DIMS);
  for (let i = 0; i < rows; i++) {
    for (let k = 0; k < DIMS; k++) q[k] = next();
    gallery.add(`s${i}`, q);
  }
  const rssGallery = process.memoryUsage().rss - rssBefore;
  const next2 = byteStream(SEED);
  for (let i = 0; i < rows; i++) {
    for (let k = 0; k < DIMS; k++) q[k] = next2();
    store.append(q, i + 1);
  }
  const probe = new Int8Array(DIMS);
  for (let k = 0; k < DIMS; k++) probe[k] = next();
  // the relaxed kernel splits the probe in two halves of 0..127, which -128 has not: keep it out of the probe
  const probeRelaxed = probe.map((v) => (v === -128 ? -127 : v));

  const kernels: { name: string; choice: KernelChoice }[] = [{ name: 'wasm-simd', choice: 'simd' }];
  if (kernelModules(true).relaxed) kernels.push({ name: 'wasm-relaxed-simd', choice: 'relaxed' });
  const dk = Object.fromEntries(
    kernels.map((k) => [
      k.name,
      new DotKernel(store.rowsMemory, () => store.rows(), store.rowsAt, DIMS, 0, k.choice, kernelModules(true)),
    ]),
  );

  const t: Record<string, number[]> = { native: [], nativeRelaxedProbe: [], identify: [], identifyThreads: [] };
  for (const k of kernels) t[k.name] = [];
  const ratios: Record<string, number[]> = Object.fromEntries(kernels.map((k) => [k.name, []]));
  const checks: Record<string, boolean> = {};
  // warm: first touch of the pages, compilation of the kernels, the threads' first slice
  for (const k of kernels) scanAll(dk[k.name], k.name === 'wasm-relaxed-simd' ? probeRelaxed : probe, rows);
  gallery.identify(probe);
  await gallery.identifyAsync(probe);
  const nativeChecksum = native ? (await native.run()).checksum : null;
  const slices: number[][] = [];
  let single: ReturnType<FaceGallery['identify']> = [];
  let multi: ReturnType<FaceGallery['identify']> = [];
  for (let r = 0; r < rounds; r++) {
    const nat = native ? await native.run() : null;
    if (nat) t.native.push(nat.ms);
    for (const k of kernels) {
      const res = scanAll(dk[k.name], k.name === 'wasm-relaxed-simd' ? probeRelaxed : probe, rows);
      t[k.name].push(res.ms);
      if (nat) ratios[k.name].push(nat.ms / res.ms);
      if (k.name === 'wasm-simd')
        checks['wasm-simd checksum = native checksum'] = nativeChecksum === null || res.checksum === nativeChecksum;
    }
    let t0 = performance.now();
    single = gallery.identify(probe, { topK: 10 });
    t.identify.push(performance.now() - t0);
    t0 = performance.now();
    multi = await gallery.identifyAsync(probe, { topK: 10 });
    t.identifyThreads.push(performance.now() - t0);
    slices.push([...pool.lastSliceMs]);
  }
  if (kernels.length > 1) {
    const a = scanAll(dk['wasm-simd'], probeRelaxed, rows),
      b = scanAll(dk['wasm-relaxed-simd'], probeRelaxed, rows);
    checks['wasm-relaxed-simd checksum = wasm-simd checksum'] = a.checksum === b.checksum;
  }
  checks['threaded top-10 = single-thread top-10'] = JSON.stringify(single) === JSON.stringify(multi);
  native?.close();
  await pool.close();

  const bytes = store.rowsMemory.buffer.byteLength + store.metaMemory.buffer.byteLength;
  const perMillion = (x: number) => Math.round(((x / rows) * 1e6) / 2 ** 20);
  const out: Record<string, unknown> = {
    machine: {
      cpu: cpus()[0]?.model,
      cores: availableParallelism(),
      node: process.version,
      loadAverageAtStart: loadAtStart,
    },
    rows,
    dims: DIMS,
    rounds,
    native: {
      ...nativeInfo,
      msPerScan: native ? round2(median(t.native)) : null,
      fastestMsPerScan: native ? round2(Math.min(...t.native)) : null,
      comparisonsPerSecond: native ? Math.round((rows / median(t.native)) * 1000) : null,
    },
    relaxedSimd: {
      status: relaxedStatus(true),
      meaning: {
        exact: 'validated and passed the known-answer check: measured below',
        inexact:
          'validated, but its sums failed the known-answer check (Node 20 V8 with --experimental-wasm-relaxed-simd): not used, plain SIMD instead',
        unsupported: 'this runtime does not validate relaxed SIMD: plain SIMD',
      }[relaxedStatus(true)],
    },
    wasmKernels: Object.fromEntries(
      kernels.map((k) => [
        k.name,
        {
          msPerScan: round2(median(t[k.name])),
          fastestMsPerScan: round2(Math.min(...t[k.name])),
          ratioOfFastestScans: native ? round2(Math.min(...t.native) / Math.min(...t[k.name])) : null,
          comparisonsPerSecond: Math.round((rows / median(t[k.name])) * 1000),
          ratioToNativePerCore: native ? round2(median(ratios[k.name])) : null,
          ratiosPerRound: ratios[k.name].map(round2),
        },
      ]),
    ),
    identify: {
      topK: 10,
      singleThreadMs: round2(median(t.identify)),
      threads,
      threadedMs: round2(median(t.identifyThreads)),
      fastest: { singleThreadMs: round2(Math.min(...t.identify)), threadedMs: round2(Math.min(...t.identifyThreads)) },
      kernel: gallery.kernel,
      threadSliceMsPerRound: slices.map((x) => x.map(round2)),
      singleThreadMsPerRound: t.identify.map(round2),
      threadedMsPerRound: t.identifyThreads.map(round2),
    },
    checks,
    memory: {
      partitionBytesPerMillion: `${perMillion(bytes)} MiB (rows ${DIMS} B + 16 B per row, the memories' growth slack included)`,
      processGrowthPerMillionWhileFilling: `${perMillion(rssGallery)} MiB (RSS, subject maps and names included)`,
    },
  };
  if (!args.includes('--no-db')) {
    try {
      out.databaseLoad = await databaseLoad(Math.min(rows, 1_000_000));
    } catch (e) {
      out.databaseLoad = { skipped: String((e as Error).message ?? e).slice(0, 300) };
    }
  }
  out.loadAverageAtEnd = load();
  return out;
}
