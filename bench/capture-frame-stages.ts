// npm run bench -- capture --frame-stages [--rounds N] [--backend wasm|native] [--purpose VERIFY|ENROLL|CHECK]
//                                         [--pool N] [--pool-rounds N]
// Where one capture frame's analysis CPU goes, stage by stage (issue 33: 6 sessions x 3 frames/s on 2 cores need
// about 110 ms of CPU per frame or less). The frames are what the sidecar hands the pool: test photos of the
// capture bench's person fitted into 640x480 as the browsers' fake cameras play them (test/support/capture-rig.ts
// `clip`), encoded by ffmpeg's mjpeg at -q:v 2 as the decoder does (src/sidecar/decoders/rtp-decoder.ts). The
// analysis options are a capture's for the purpose (`frameMeasures` with the capture's default gates: passive
// liveness required, no ICAO).
// Two measures, inline on one thread (one pool worker's work), in process CPU (it hardly moves with the machine's
// other load, unlike wall time):
// - `analysis`: the pipeline itself (`analyseImage`, as the worker runs it), per frame: what a frame costs now, and
//   with the embedding left for the frames a capture keeps (`embedding: false`), the per-frame path of a capture.
// - `stages`: the pipeline's own functions called in its order, each step's CPU summed over the frames; the
//   model runs counted apart from their crops. They add up to about one analysis.
// - with --pool N (workers): the extraction pool as the service runs it, saturated (2 jobs per worker in flight),
//   on the --backend, the frames analysed with everything and without the embedding, in alternated passes (A B A B ...): frames a
//   second and the process's CPU (every thread) per frame, the pool's own costs (transfer, queue, GC) included.
import { execFile } from 'node:child_process';
import { createExtractor } from '../src/extraction/index.js';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { analyseImage } from '../src/biometrics/face/pipeline.js';
import type { AnalyseOptions } from '../src/biometrics/face/analysis.js';
import { frameMeasures } from '../src/services/biometrics/analyse-samples.js';
import { benchRunner, cpu, extractionBackend, faceStages } from './face-stages.js';

const PHOTOS = fileURLToPath(new URL('../test/fixtures/photos/labelled/franck/', import.meta.url));
/** The capture bench's person: the enrolment photo and the three that verify (capture-stages.ts). */
const FRAME_PHOTOS = ['franck_02159', 'franck_02221', 'franck_02045', 'franck_01829'];

const option = (args: string[], name: string, fallback: string) =>
  args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1]! : fallback;

/** A photo as a capture frame: fitted into 640x480 on black, then ffmpeg's mjpeg at -q:v 2 (the decoder's). */
export async function captureFrame(photo: string, filter = ''): Promise<Uint8Array> {
  const fit = `scale=640:480:force_original_aspect_ratio=decrease,pad=640:480:(ow-iw)/2:(oh-ih)/2${filter}`;
  const { stdout } = await promisify(execFile)(
    'ffmpeg',
    [
      ...['-hide_banner', '-loglevel', 'error', '-i', `${PHOTOS}${photo}.jpg`, '-vf', `${fit},format=yuvj420p`],
      ...['-frames:v', '1', '-c:v', 'mjpeg', '-q:v', '2', '-f', 'image2pipe', 'pipe:1'],
    ],
    { encoding: 'buffer', maxBuffer: 16 << 20 },
  );
  return new Uint8Array(stdout);
}

export async function run(args: string[]) {
  const rounds = Number(option(args, 'rounds', '10'));
  const backend = extractionBackend(option(args, 'backend', 'wasm'));
  const purpose = option(args, 'purpose', 'VERIFY') as 'VERIFY' | 'ENROLL' | 'CHECK';
  const runner = await benchRunner(backend);
  const frames = await Promise.all(FRAME_PHOTOS.map((p) => captureFrame(p)));
  // The same frames with the light turned down to a fifth (test/gateway/capture-refusals.test.ts's TOO_DARK):
  // faces found, refused on their quality before the judge reads their liveness.
  const darkFrames = await Promise.all(FRAME_PHOTOS.map((p) => captureFrame(p, ",curves=all='0/0 1/0.18'")));
  // A capture's gates by default: passive liveness over the frames (detectLiveness true), no ICAO, one face, the
  // settings' default quality.face.minimum and liveness.threshold.
  const gates = {
    allowMultiple: false,
    minQuality: 50,
    requireLiveness: true,
    livenessThreshold: 50,
    checkIcao: false,
  };
  // Everything a frame's analysis measured before issue 33's deferred embedding, and what it measures now.
  const measures: AnalyseOptions = { ...frameMeasures(purpose, gates), embedding: true };
  const deferredOpts: AnalyseOptions = frameMeasures(purpose, gates);

  const { spent, analyse, totals } = faceStages(runner);
  /** The pipeline's steps for one frame, in analyseImage's order (a 640x480 frame is not framed). */
  const stepwise = async (bytes: Uint8Array) => {
    if (!(await analyse(bytes, measures))) throw new Error('no face in a capture frame of the bench');
  };
  /** CPU ms per frame of the whole pipeline with these options, over every frame twice. */
  const whole = async (opts: AnalyseOptions, on = frames) => {
    const c0 = cpu();
    for (let r = 0; r < 2; r++) for (const f of on) await analyseImage(runner, f, opts);
    return (cpu() - c0) / (2 * on.length);
  };

  // Warm-up: V8's optimising tier and the sessions' first runs.
  for (let r = 0; r < 3; r++) for (const f of frames) await analyseImage(runner, f, measures);
  for (const f of frames) await stepwise(f);
  spent.clear();
  const loadBefore = loadavg().map((x) => Number(x.toFixed(1)));
  // With and without the embedding alternated, `rounds` times each, so that both see the same machine.
  const measured = { now: [] as number[], deferred: [] as number[] };
  for (let i = 0; i < rounds; i++) {
    measured.now.push(await whole(measures));
    measured.deferred.push(await whole(deferredOpts));
  }
  // Refused frames, liveness measured on every face (before) and only where the judge could keep it (now).
  const { livenessGate: _gate, ...ungated } = deferredOpts;
  const refused = { everyFace: [] as number[], gated: [] as number[] };
  for (let i = 0; i < rounds; i++) {
    refused.everyFace.push(await whole(ungated, darkFrames));
    refused.gated.push(await whole(deferredOpts, darkFrames));
  }
  const half = Math.max(1, Math.floor(rounds / 2));
  const c0 = cpu();
  for (let r = 0; r < half * 2; r++) for (const f of frames) await stepwise(f);
  const n = frames.length * half * 2;
  const stepTotal = cpu() - c0;
  const apart = totals();
  const perFrame = (v: number) => Number((v / n).toFixed(2));
  const modelsMs = [...apart].filter(([k]) => k.startsWith('model ')).reduce((s, [, v]) => s + v, 0);
  const median = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return Number(((sorted[(sorted.length - 1) >> 1]! + sorted[sorted.length >> 1]!) / 2).toFixed(2));
  };
  const result = {
    benchmark: 'capture --frame-stages',
    backend,
    purpose,
    measures,
    frames: { photos: FRAME_PHOTOS, size: '640x480', analysedPerMeasure: 2 * rounds * frames.length },
    machine: {
      cores: availableParallelism(),
      loadAverageBefore: loadBefore,
      loadAverageAfter: loadavg().map((x) => Number(x.toFixed(1))),
    },
    analysisCpuMsPerFrame: {
      everything: median(measured.now),
      withoutEmbedding: median(measured.deferred),
      ratio: Number((median(measured.deferred) / median(measured.now)).toFixed(3)),
      runs: { everything: measured.now.map(Math.round), withoutEmbedding: measured.deferred.map(Math.round) },
    },
    refusedFrameCpuMs: {
      frames: 'the same frames darkened to a fifth (TOO_DARK), analysed without the embedding',
      livenessOnEveryFace: median(refused.everyFace),
      livenessOnFacesTheJudgeMayKeep: median(refused.gated),
      ratio: Number((median(refused.gated) / median(refused.everyFace)).toFixed(3)),
    },
    stepwiseCpuMsPerFrame: perFrame(stepTotal),
    modelsMsPerFrame: perFrame(modelsMs),
    otherMsPerFrame: perFrame(stepTotal - modelsMs),
    stagesMsPerFrame: Object.fromEntries([...apart].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, perFrame(v)])),
  };
  await runner.release();
  const workers = Number(option(args, 'pool', '0'));
  if (!workers) return result;
  const poolRounds = Number(option(args, 'pool-rounds', '6'));
  return { ...result, pool: await poolPasses(frames, workers, poolRounds, backend, measures, deferredOpts) };
}

/** The pool saturated on the frames, passes with and without the embedding alternated `rounds` times each. */
async function poolPasses(
  frames: Uint8Array[],
  workers: number,
  rounds: number,
  backend: 'wasm' | 'native',
  everything: AnalyseOptions,
  withoutEmbedding: AnalyseOptions,
) {
  const pool = await createExtractor({ mode: 'worker-threads', size: workers, backend });
  const jobsPerPass = 8 * workers * frames.length;
  const pass = async (opts: AnalyseOptions) => {
    const c0 = cpu();
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 2 * workers }, async () => {
        while (next < jobsPerPass) await pool.analyseFace(new Uint8Array(frames[next++ % frames.length]!), opts);
      }),
    );
    return { perSecond: jobsPerPass / ((performance.now() - t0) / 1000), cpuMs: (cpu() - c0) / jobsPerPass };
  };
  try {
    await pass(everything); // warm-up: every worker's sessions and optimising tier
    const loadBefore = loadavg().map((x) => Number(x.toFixed(1)));
    type Pass = { perSecond: number; cpuMs: number };
    const runs = { everything: [] as Pass[], withoutEmbedding: [] as Pass[] };
    for (let r = 0; r < rounds; r++) {
      runs.everything.push(await pass(everything));
      runs.withoutEmbedding.push(await pass(withoutEmbedding));
    }
    const median = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return Number(((s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2).toFixed(2));
    };
    const summary = (rs: Pass[]) => ({
      framesPerSecond: median(rs.map((r) => r.perSecond)),
      cpuMsPerFrame: median(rs.map((r) => r.cpuMs)),
      passes: rs.map((r) => [Number(r.perSecond.toFixed(2)), Number(r.cpuMs.toFixed(1))]),
    });
    const a = summary(runs.everything);
    const b = summary(runs.withoutEmbedding);
    return {
      workers,
      inFlight: 2 * workers,
      jobsPerPass,
      loadAverageBefore: loadBefore,
      loadAverageAfter: loadavg().map((x) => Number(x.toFixed(1))),
      everything: a,
      withoutEmbedding: b,
      ratios: {
        framesPerSecond: Number((b.framesPerSecond / a.framesPerSecond).toFixed(3)),
        cpuMsPerFrame: Number((b.cpuMsPerFrame / a.cpuMsPerFrame).toFixed(3)),
      },
    };
  } finally {
    await pool.close();
  }
}
