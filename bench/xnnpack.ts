// npm run bench -- xnnpack [--models fr_feature,fr_landmark,fr_liveness] [--rounds N] [--inputs N]
// Issue 19: is wasm extraction slower than onnxruntime-node because of onnxruntime-web's float kernels (MLAS
// built for wasm SIMD) or because of WebAssembly itself? The one other wasm SIMD kernel library published is
// XNNPACK, inside @tensorflow/tfjs-backend-wasm (tools/xnnpack, installed on first use). Each model runs as
// tfjs ops (bench/onnx-on-tfjs.ts) beside onnxruntime-web and onnxruntime-node, all three on one thread, the
// same flushed weights (as the service loads them) and the same inputs, the runtimes alternating input by input.
// Per model: CPU ms per inference (process.cpuUsage), their ratios, the least cosine between the tfjs and the
// onnxruntime-web outputs (the interpreter's check), and tf.profile's kernel split. JSON on stdout.
import { cpus, loadavg } from 'node:os';
import * as ortWeb from 'onnxruntime-web';
import { FACE_MODELS, type FaceModelId } from '../src/biometrics/face/runner.js';
import { cosine } from '../src/biometrics/template.js';
import { nodeModelLoader } from '../src/extraction/node-models.js';
import { flushSubnormalWeights } from '../src/extraction/onnx-flush-subnormals.js';
import { configureEnv, readFaceModel } from '../src/extraction/ort-web-runner.js';
import { captureInputs, loadInputs, photosIn, type CapturedInput } from '../scripts/quantise/calibration.js';
import { CALIBRATION_DIRS, CAPTURE_DIR } from '../scripts/quantise-models.js';
import { toolRequire } from '../scripts/tool.mjs';
import { onnxOnTfjs, type Tf } from './onnx-on-tfjs.js';
import { loadOrtNode } from './ort-node.js';
import { processCpuMs as cpuMs } from './thread-cpu.js';
import { NATIVE_SESSION_OPTIONS } from '../src/extraction/native-session-options.js';

const DEFAULT_MODELS: FaceModelId[] = ['fr_feature', 'fr_landmark', 'fr_liveness'];
const r2 = (x: number) => Math.round(x * 100) / 100;
const r3 = (x: number) => Math.round(x * 1000) / 1000;
const load = () => loadavg().map(r2);

interface ProfileKernel {
  name: string;
  inputShapes: number[][];
  kernelTimeMs: number | { error: string };
}
/** tfjs-core with the wasm backend registered: the ops, plus what sets the backend up and profiles it. */
type TfWasm = Tf & {
  env(): { set(flag: string, value: boolean): void; getAsync(flag: string): Promise<unknown> };
  setBackend(name: string): Promise<boolean>;
  ready(): Promise<void>;
  getBackend(): string;
  profile(f: () => void): Promise<{ kernels: ProfileKernel[] }>;
  version_core: string;
};

/** tfjs on tfjs-backend-wasm, single-threaded (as onnxruntime-web runs here), refusing to go on without SIMD. */
async function tfjsWasm(): Promise<{ tf: TfWasm; simd: true; threads: false; version: string }> {
  const require = toolRequire('xnnpack');
  const before = new Set([...process.listeners('uncaughtException'), ...process.listeners('unhandledRejection')]);
  const tf = require('@tensorflow/tfjs-core') as TfWasm;
  require('@tensorflow/tfjs-backend-wasm'); // registers the 'wasm' backend with this tfjs-core
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
  if (!(await tf.setBackend('wasm'))) throw new Error('tfjs-backend-wasm did not initialise');
  await tf.ready();
  // Emscripten's module rethrows any uncaught exception or rejection from a handler of its own, which prints
  // its whole minified source before the error: the process's own handling is restored.
  for (const listener of process.listeners('uncaughtException'))
    if (!before.has(listener)) process.off('uncaughtException', listener);
  for (const listener of process.listeners('unhandledRejection'))
    if (!before.has(listener)) process.off('unhandledRejection', listener);
  if ((await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT')) !== true)
    throw new Error('tfjs-backend-wasm runs without SIMD here: no comparison with onnxruntime-web (SIMD)');
  return { tf, simd: true, threads: false, version: tf.version_core };
}

/**
 * The same inputs for every runtime: the face pipeline's own inputs of each model, from `npm run
 * quantise-models`'s capture when it is there, else captured now from a few calibration photos; synthetic
 * (deterministic) ones only when neither exists.
 */
async function inputsFor(
  models: readonly FaceModelId[],
  count: number,
  dimsOf: (id: FaceModelId) => number[],
): Promise<{ source: string; inputs: Map<FaceModelId, CapturedInput[]> }> {
  const cached = new Map(models.map((id) => [id, loadInputs(CAPTURE_DIR, id)?.slice(0, count) ?? []]));
  if ([...cached.values()].every((l) => l.length)) return { source: `captured (${CAPTURE_DIR})`, inputs: cached };
  const photos = photosIn(CALIBRATION_DIRS);
  if (photos.length) {
    // Group photos: each gives a few faces; twice `count` photos is more than enough for every model.
    const captured = await captureInputs(photos.slice(0, 2 * count), count);
    if (models.every((id) => captured.get(id)?.length))
      return { source: `captured now from ${Math.min(photos.length, 2 * count)} photos`, inputs: captured };
  }
  const synthetic = (id: FaceModelId) =>
    Array.from({ length: count }, (_, s) => {
      const dims = dimsOf(id);
      const size = dims.reduce((a, b) => a * b, 1);
      return { dims, data: Float32Array.from({ length: size }, (_, i) => Math.sin(i * 0.37 + s) * 0.9) };
    });
  return {
    source: 'synthetic (no captured inputs, no photos)',
    inputs: new Map(models.map((id) => [id, synthetic(id)])),
  };
}

/** The outputs' agreement: the project's cosine, and 1 for outputs that are equal (two zero vectors included). */
const agreement = (a: Float32Array, b: Float32Array) => (a.every((v, i) => v === b[i]) ? 1 : cosine(a, b));

/** Where tfjs's time goes, by the kind of kernel (tf.profile's wall-clock kernel times). */
function kernelKind(k: ProfileKernel): string {
  if (k.name.includes('Depthwise')) return 'depthwiseConv';
  if (k.name.includes('Conv2D')) {
    const [kh, kw] = k.inputShapes[1] ?? []; // the filter: [kh, kw, in, out]
    return kh === 1 && kw === 1 ? 'conv1x1' : 'otherConv';
  }
  if (['Add', 'Mul', 'Prelu', 'Relu', 'Sigmoid'].includes(k.name)) return 'elementwise';
  return 'other';
}

export async function run(args: string[]): Promise<unknown> {
  const arg = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const models = (arg('models')?.split(',') ?? DEFAULT_MODELS) as FaceModelId[];
  for (const id of models) if (!FACE_MODELS.includes(id)) throw new Error(`unknown model ${id}`);
  const rounds = Number(arg('rounds') ?? 20);
  const inputCount = Number(arg('inputs') ?? 8);
  const loadAtStart = load();

  const { tf, ...tfjs } = await tfjsWasm();
  configureEnv({});
  const ortNode = loadOrtNode();
  const webOptions = { executionProviders: ['wasm'], graphOptimizationLevel: 'all', logSeverityLevel: 3 } as const;

  const sessions = new Map<FaceModelId, { web: ortWeb.InferenceSession; model: ReturnType<typeof onnxOnTfjs> }>();
  const nativeSessions = new Map<FaceModelId, Awaited<ReturnType<typeof ortNode.InferenceSession.create>>>();
  const tfjsModel = (id: FaceModelId, bytes: Uint8Array) => {
    try {
      return onnxOnTfjs(tf, bytes);
    } catch (e) {
      throw new Error(`${id}: ${(e as Error).message}`);
    }
  };
  for (const id of models) {
    // Weights as the service loads them: subnormals flushed to zero (src/extraction/onnx-flush-subnormals.ts).
    const bytes = flushSubnormalWeights((await readFaceModel(id, { loadModel: nodeModelLoader() })).bytes);
    sessions.set(id, { web: await ortWeb.InferenceSession.create(bytes, webOptions), model: tfjsModel(id, bytes) });
    nativeSessions.set(id, await ortNode.InferenceSession.create(bytes, NATIVE_SESSION_OPTIONS));
  }
  const dimsOf = (id: FaceModelId) => {
    const s = sessions.get(id)!.web;
    const meta = s.inputMetadata[0]!;
    return meta.isTensor ? meta.shape.map((d) => (typeof d === 'number' ? d : 1)) : [];
  };
  const { source, inputs } = await inputsFor(models, inputCount, dimsOf);

  const results: Record<string, unknown> = {};
  for (const id of models) {
    const { web, model } = sessions.get(id)!;
    const native = nativeSessions.get(id)!;
    const list = inputs.get(id)!;
    const ms = { tfjs: 0, ortWeb: 0, native: 0 };
    let leastCosine = 1;
    // One round of warm-up, not counted; then each input through the three runtimes in turn, the order
    // rotating from one input to the next so that none always runs first (after the others' cache traffic).
    for (let r = 0; r <= rounds; r++) {
      for (const [i, x] of list.entries()) {
        let tfjsOut: Record<string, Float32Array> = {};
        let webOut: Record<string, Float32Array> = {};
        const steps: [keyof typeof ms, () => Promise<void>][] = [
          [
            'tfjs',
            async () => {
              tfjsOut = model.run(x.data, x.dims);
            },
          ],
          [
            'ortWeb',
            async () => {
              const out = await web.run({ [model.inputName]: new ortWeb.Tensor('float32', x.data, [...x.dims]) });
              webOut = Object.fromEntries(Object.entries(out).map(([k, v]) => [k, v.data as Float32Array]));
            },
          ],
          [
            'native',
            async () => {
              await native.run({ [model.inputName]: new ortNode.Tensor('float32', x.data, [...x.dims]) });
            },
          ],
        ];
        for (let s = 0; s < steps.length; s++) {
          const [name, step] = steps[(s + i + r) % steps.length]!;
          const t = cpuMs();
          await step();
          if (r > 0) ms[name] += cpuMs() - t;
        }
        for (const name of model.outputNames)
          leastCosine = Math.min(leastCosine, agreement(tfjsOut[name]!, webOut[name]!));
      }
    }
    const n = rounds * list.length;
    // The kernel split, after the timing (profiling slows every kernel down a little).
    const byKind: Record<string, number> = {};
    const passes = 3;
    for (let pass = 0; pass < passes; pass++)
      for (const x of list) {
        const profile = await tf.profile(() => {
          model.run(x.data, x.dims);
        });
        // Fused ops are also recorded as a whole ('fusedConv2d__op'), around their kernel: counted once, as kernels.
        for (const k of profile.kernels)
          if (typeof k.kernelTimeMs === 'number' && !k.name.endsWith('__op'))
            byKind[kernelKind(k)] = (byKind[kernelKind(k)] ?? 0) + k.kernelTimeMs / (passes * list.length);
      }
    const kernelTotal = Object.values(byKind).reduce((a, b) => a + b, 0);
    results[id] = {
      inputs: list.length,
      inferencesPerRuntime: n,
      cpuMsPerInference: { tfjsWasm: r2(ms.tfjs / n), ortWeb: r2(ms.ortWeb / n), ortNode: r2(ms.native / n) },
      ratio: {
        tfjsToOrtWeb: r3(ms.tfjs / ms.ortWeb),
        tfjsToNative: r3(ms.tfjs / ms.native),
        ortWebToNative: r3(ms.ortWeb / ms.native),
      },
      leastCosineTfjsOrtWeb: Number(leastCosine.toFixed(7)),
      tfjsKernelMsPerInference: Object.fromEntries(
        ['conv1x1', 'otherConv', 'depthwiseConv', 'elementwise', 'other'].map((kind) => [
          kind,
          { ms: r2(byKind[kind] ?? 0), share: r3((byKind[kind] ?? 0) / kernelTotal) },
        ]),
      ),
    };
  }

  for (const { web, model } of sessions.values()) {
    await web.release();
    model.dispose();
  }
  for (const s of nativeSessions.values()) await s.release();
  return {
    bench: 'xnnpack',
    what: 'CPU ms per inference, one thread each: tfjs-backend-wasm (XNNPACK, wasm SIMD) vs onnxruntime-web (MLAS, wasm SIMD) vs onnxruntime-node',
    tfjs: { version: tfjs.version, backend: tf.getBackend(), simd: tfjs.simd, multithread: tfjs.threads },
    onnxruntime: { web: ortWeb.env.versions.web, node: ortNode.env.versions.node },
    weights: 'subnormals flushed to zero (as the service loads them), all three runtimes',
    inputs: source,
    rounds,
    models: results,
    machine: { cpu: cpus()[0]?.model, cores: cpus().length },
    loadAverage: { atStart: loadAtStart, atEnd: load() },
  };
}
