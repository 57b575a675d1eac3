// npx tsx scripts/quantise/bench-int8.ts [--rounds N] [--per-model N] [--photos N] [--json OUT]
// Speed of the int8 face models (scripts/quantise-models.ts) against the float ones, one thread each:
//   per model: onnxruntime-web float, onnxruntime-web int8, onnxruntime-node float (and int8), on the same
//   captured inputs, the variants alternating round by round in one run;
//   whole pipeline: analyseImage (decode, detect, landmarks, embedding, checks) over labelled photos with the
//   three runners, alternating photo by photo.
// Each figure is the median over rounds of the mean ms per inference, with the 1-minute load average.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-web';
import type * as OrtCommon from 'onnxruntime-common';
import { analyseImage } from '../../src/biometrics/face/pipeline.js';
import { FACE_MODELS, type FaceModelId, type ModelRunner } from '../../src/biometrics/face/runner.js';
import { enableFastJpegNode, MODELS_DIR, nodeModelLoader } from '../../src/extraction/node-models.js';
import { OrtNodeRunner } from '../../src/extraction/node-native-runner.js';
import { configureEnv, OrtWebRunner, type ModelLoader } from '../../src/extraction/ort-web-runner.js';
import { toolRequire } from '../tool.mjs';
import { CAPTURE_DIR, INT8_MODELS, int8File } from '../quantise-models.js';
import { loadInputs, photosIn } from './calibration.js';
import { int8Loader } from './int8-loader.js';
import { flushSubnormalWeights } from './onnx-int8.js';
import { NATIVE_SESSION_OPTIONS } from '../../src/extraction/native-session-options.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const rounds = Number(arg('rounds') ?? 5);
const perModel = Number(arg('per-model') ?? 10);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const load = () => Number(loadavg()[0]!.toFixed(2));

type Session = {
  run(feeds: Record<string, unknown>): Promise<Record<string, { data: unknown; dispose?: () => void }>>;
};

async function perModelBench(): Promise<Record<string, unknown>> {
  configureEnv({});
  const ortNode = toolRequire('bench')('onnxruntime-node') as typeof OrtCommon;
  const webOpts = { executionProviders: ['wasm'], graphOptimizationLevel: 'all', logSeverityLevel: 3 } as const;
  const out: Record<string, unknown> = {};
  for (const id of (arg('models')?.split(',') as FaceModelId[] | undefined) ?? INT8_MODELS) {
    const inputs = (loadInputs(CAPTURE_DIR, id) ?? []).slice(0, perModel);
    if (!inputs.length) throw new Error(`no captured inputs for ${id}: run npm run quantise-models first`);
    // --flush: subnormal weights set to zero in every model first (float and int8 builds alike).
    const fl = (b: Uint8Array) => (process.argv.includes('--flush') ? flushSubnormalWeights(b).model : b);
    const float = fl(new Uint8Array(readFileSync(join(MODELS_DIR, `${id}.onnx`)))),
      int8 = fl(new Uint8Array(readFileSync(join(MODELS_DIR, int8File(id)))));
    const variants: [string, Session, typeof ort.Tensor | typeof ortNode.Tensor][] = [
      ['wasmFloat', (await ort.InferenceSession.create(float, webOpts)) as unknown as Session, ort.Tensor],
      ['wasmInt8', (await ort.InferenceSession.create(int8, webOpts)) as unknown as Session, ort.Tensor],
      [
        'nativeFloat',
        (await ortNode.InferenceSession.create(float, NATIVE_SESSION_OPTIONS)) as unknown as Session,
        ortNode.Tensor,
      ],
      [
        'nativeInt8',
        (await ortNode.InferenceSession.create(int8, NATIVE_SESSION_OPTIONS)) as unknown as Session,
        ortNode.Tensor,
      ],
    ];
    // Other int8 builds to compare (quantise-models --suffix S writes <id>.int8S.onnx).
    for (const suffix of arg('suffixes')?.split(',') ?? []) {
      const other = fl(
        new Uint8Array(readFileSync(join(MODELS_DIR, int8File(id).replace('.int8.', `.int8${suffix}.`)))),
      );
      variants.push([
        `wasmInt8${suffix}`,
        (await ort.InferenceSession.create(other, webOpts)) as unknown as Session,
        ort.Tensor,
      ]);
    }
    const times = new Map<string, number[]>(variants.map(([n]) => [n, []]));
    const cpu = new Map<string, number>(variants.map(([n]) => [n, 0]));
    const outputs = new Map<string, Float32Array[]>();
    const runOne = async (
      name: string,
      s: Session,
      T: typeof ort.Tensor,
      x: (typeof inputs)[number],
      keep: boolean,
    ) => {
      const o = await s.run({ input: new T('float32', x.data, x.dims) });
      const first = Object.values(o)[0]!;
      if (keep) outputs.set(name, [...(outputs.get(name) ?? []), new Float32Array(first.data as Float32Array)]);
      for (const v of Object.values(o)) v.dispose?.();
    };
    for (const [name, s, T] of variants) for (const x of inputs) await runOne(name, s, T as typeof ort.Tensor, x, true); // warm-up, outputs kept
    const loads: number[] = [];
    // Variants alternate input by input (order rotated each time), so a change of load hits them all alike;
    // wall time per round, and process CPU time (user + system) summed over every round.
    for (let r = 0; r < rounds; r++) {
      loads.push(load());
      const wall = new Map<string, number>(variants.map(([n]) => [n, 0]));
      for (const [k, x] of inputs.entries()) {
        const order = variants.map((_, i) => variants[(i + k + r) % variants.length]!);
        for (const [name, s, T] of order) {
          const c0 = process.cpuUsage(),
            t0 = performance.now();
          await runOne(name, s, T as typeof ort.Tensor, x, false);
          wall.set(name, wall.get(name)! + performance.now() - t0);
          const c = process.cpuUsage(c0);
          cpu.set(name, cpu.get(name)! + (c.user + c.system) / 1000);
        }
      }
      for (const [n, w] of wall) times.get(n)!.push(w / inputs.length);
    }
    const ms = Object.fromEntries([...times].map(([n, t]) => [n, Number(median(t).toFixed(2))]));
    const cpuMs = Object.fromEntries([...cpu].map(([n, c]) => [n, Number((c / rounds / inputs.length).toFixed(2))]));
    // Closeness of the int8 outputs to the float ones (first output): worst cosine and max abs difference.
    let worstCos = 1,
      maxAbs = 0;
    outputs.get('wasmFloat')!.forEach((f, i) => {
      const q = outputs.get('wasmInt8')![i]!;
      let d = 0,
        nf = 0,
        nq = 0;
      for (let k = 0; k < f.length; k++) {
        d += f[k]! * q[k]!;
        nf += f[k]! ** 2;
        nq += q[k]! ** 2;
        maxAbs = Math.max(maxAbs, Math.abs(f[k]! - q[k]!));
      }
      worstCos = Math.min(worstCos, d / Math.sqrt(nf * nq));
    });
    out[id] = {
      wallMs: ms,
      cpuMs,
      cpuInt8OverFloatWasm: Number((cpuMs.wasmInt8! / cpuMs.wasmFloat!).toFixed(3)),
      cpuWasmInt8OverNativeFloat: Number((cpuMs.wasmInt8! / cpuMs.nativeFloat!).toFixed(3)),
      cpuWasmFloatOverNativeFloat: Number((cpuMs.wasmFloat! / cpuMs.nativeFloat!).toFixed(3)),
      wallInt8OverFloatWasm: Number((ms.wasmInt8! / ms.wasmFloat!).toFixed(3)),
      wasmInt8OverNativeFloat: Number((ms.wasmInt8! / ms.nativeFloat!).toFixed(3)),
      wasmFloatOverNativeFloat: Number((ms.wasmFloat! / ms.nativeFloat!).toFixed(3)),
      worstCosine: Number(worstCos.toFixed(5)),
      maxAbsDiff: Number(maxAbs.toPrecision(3)),
      inputs: inputs.length,
      rounds,
      load1: loads,
    };
    console.log(id, JSON.stringify(out[id]));
  }
  return out;
}

function mixedLoader(spec: string): ModelLoader {
  const parts = spec.split(',').map((p) => p.split(':') as [FaceModelId, string?]);
  const base = nodeModelLoader();
  return (file) => {
    const hit = parts.find(([id]) => file === `${id}.onnx`);
    return hit ? base(int8File(hit[0]).replace('.int8.', `.int8${hit[1] ?? ''}.`)) : base(file);
  };
}

async function pipelineBench(): Promise<Record<string, unknown>> {
  await enableFastJpegNode();
  const root = 'test/fixtures/photos/labelled';
  const photos = photosIn(readdirSync(root).map((d) => join(root, d))).slice(0, Number(arg('photos') ?? 12));
  const bytes = await Promise.all(photos.map(async (p) => new Uint8Array(await readFile(p))));
  // --flush: every model (float and int8, every runner) with its subnormal weights set to zero first.
  const flush = process.argv.includes('--flush');
  const f = (l: ModelLoader): ModelLoader => (flush ? async (file) => flushSubnormalWeights(await l(file)).model : l);
  const verify = !flush;
  const runners: [string, ModelRunner][] = [
    ['wasmFloat', await OrtWebRunner.create({ loadModel: f(nodeModelLoader()), models: FACE_MODELS, verify })],
    ['wasmInt8', await OrtWebRunner.create({ loadModel: f(int8Loader()), models: FACE_MODELS, verify: false })],
    // --mixed fr_feature:pw,...: a runner with only those models int8 (each from the build with that suffix).
    ...(arg('mixed')
      ? [
          [
            'wasmMixed',
            await OrtWebRunner.create({ loadModel: f(mixedLoader(arg('mixed')!)), models: FACE_MODELS, verify: false }),
          ] as [string, ModelRunner],
        ]
      : []),
    ['nativeFloat', await OrtNodeRunner.create({ loadModel: f(nodeModelLoader()), models: FACE_MODELS, verify })],
  ];
  const times = new Map<string, number[]>(runners.map(([n]) => [n, []]));
  const cpu = new Map<string, number>(runners.map(([n]) => [n, 0]));
  const loads: number[] = [];
  for (let r = 0; r <= rounds; r++) {
    if (r) loads.push(load());
    const wall = new Map<string, number>(runners.map(([n]) => [n, 0]));
    // Runners alternate photo by photo (order rotated), round 0 warms up.
    for (const [k, b] of bytes.entries()) {
      for (let i = 0; i < runners.length; i++) {
        const [name, runner] = runners[(i + k + r) % runners.length]!;
        const c0 = process.cpuUsage(),
          t0 = performance.now();
        await analyseImage(runner, b, { checks: true, attributes: false, liveness: true });
        wall.set(name, wall.get(name)! + performance.now() - t0);
        const c = process.cpuUsage(c0);
        if (r) cpu.set(name, cpu.get(name)! + (c.user + c.system) / 1000);
      }
    }
    if (r) for (const [n, w] of wall) times.get(n)!.push(w / bytes.length);
  }
  for (const [, r] of runners) await r.release();
  const ms = Object.fromEntries([...times].map(([n, t]) => [n, Number(median(t).toFixed(1))]));
  const cpuMs = Object.fromEntries([...cpu].map(([n, c]) => [n, Number((c / rounds / bytes.length).toFixed(1))]));
  const over = (a: string) => Number((cpuMs[a]! / cpuMs.nativeFloat!).toFixed(3));
  const res = {
    flushedSubnormals: flush,
    wallMs: ms,
    cpuMs,
    ...(arg('mixed') ? { mixed: arg('mixed'), cpuWasmMixedOverNativeFloat: over('wasmMixed') } : {}),
    cpuWasmInt8OverNativeFloat: over('wasmInt8'),
    cpuWasmFloatOverNativeFloat: over('wasmFloat'),
    photos: bytes.length,
    rounds,
    load1: loads,
  };
  console.log('pipeline', JSON.stringify(res));
  return res;
}

const which = arg('only');
const result = {
  ...(which !== 'pipeline' ? { perModel: await perModelBench() } : {}),
  ...(which !== 'models' ? { pipeline: await pipelineBench() } : {}),
};
const json = arg('json');
if (json) writeFileSync(json, JSON.stringify(result, null, 2) + '\n');
