// The int8 quantiser (scripts/quantise/onnx-int8.ts, `npm run quantise-models`): calibrated on one photo the
// project fetches (a dlib group photo), its models load in onnxruntime-web and, on faces of another photo
// (a labelled one), give outputs close to the float model's: the embedding and the detections. And setting
// subnormal weights to zero changes no output bit (but outputs that were subnormal themselves).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-web';
import { beforeAll, describe, expect, it } from 'vitest';
import { MODELS_DIR } from '../../src/extraction/node-models.js';
import { configureEnv } from '../../src/extraction/ort-web-runner.js';
import { activationRanges, captureInputs, type CapturedInput } from '../../scripts/quantise/calibration.js';
import {
  flushSubnormalWeights,
  quantiseModel,
  tensorsToCalibrate,
  withIntermediateOutputs,
  type ConvFilter,
} from '../../scripts/quantise/onnx-int8.js';
import { PHOTOS } from '../biometrics/helpers.js';
import protobuf from 'protobufjs';

const pointwise: ConvFilter = (c) => c.group === 1 && c.kernel.every((k) => k === 1);
let calibration: Awaited<ReturnType<typeof captureInputs>>;
let probe: Awaited<ReturnType<typeof captureInputs>>;

beforeAll(async () => {
  configureEnv({});
  calibration = await captureInputs([join(PHOTOS, 'dlib/2008_002470.jpg')]);
  probe = await captureInputs([join(PHOTOS, 'labelled/franck/franck_01829.jpg')]);
}, 120_000);

const floatModel = (id: string) => new Uint8Array(readFileSync(join(MODELS_DIR, `${id}.onnx`)));
const session = (bytes: Uint8Array) =>
  ort.InferenceSession.create(bytes, {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
  });
async function run(bytes: Uint8Array, x: CapturedInput): Promise<Record<string, Float32Array>> {
  const s = await session(bytes);
  const out = await s.run({ input: new ort.Tensor('float32', x.data, x.dims) });
  const res = Object.fromEntries(Object.entries(out).map(([k, v]) => [k, new Float32Array(v.data as Float32Array)]));
  await s.release();
  return res;
}
async function quantise(id: string, filter?: ConvFilter, quantile = 1e-4): Promise<Uint8Array> {
  const float = floatModel(id);
  const names = tensorsToCalibrate(float, filter);
  const ranges = await activationRanges(
    withIntermediateOutputs(float, names),
    names,
    calibration.get(id as never)!,
    quantile,
  );
  return quantiseModel(float, { ranges, filter });
}
const opsOf = (bytes: Uint8Array) => {
  const root = protobuf.parse(readFileSync('scripts/quantise/onnx.proto', 'utf8')).root;
  const m = root.lookupType('onnx.ModelProto').decode(bytes) as unknown as {
    graph: { node: { opType: string }[] };
    opsetImport: { version: unknown }[];
  };
  const ops = new Map<string, number>();
  for (const n of m.graph.node) ops.set(n.opType, (ops.get(n.opType) ?? 0) + 1);
  return { ops, opset: Number(String(m.opsetImport[0]!.version)) };
};

describe('int8 quantiser', () => {
  it('turns the 1x1 convolutions of the embedding model into QLinearConv, whose embedding stays close to the float one', async () => {
    const float = floatModel('fr_feature');
    const int8 = await quantise('fr_feature', pointwise);
    const before = opsOf(float).ops,
      after = opsOf(int8);
    expect(after.opset).toBe(11);
    expect(after.ops.get('QLinearConv')).toBeGreaterThan(20);
    expect((after.ops.get('QLinearConv') ?? 0) + (after.ops.get('Conv') ?? 0)).toBe(before.get('Conv'));
    expect(int8.length).toBeLessThan(float.length / 2); // int8 weights
    const x = probe.get('fr_feature')![0]!;
    const [a, b] = [(await run(float, x)).output!, (await run(int8, x)).output!];
    let d = 0,
      na = 0,
      nb = 0;
    for (let i = 0; i < a.length; i++) {
      d += a[i]! * b[i]!;
      na += a[i]! ** 2;
      nb += b[i]! ** 2;
    }
    expect(d / Math.sqrt(na * nb)).toBeGreaterThan(0.97);
  });

  it('quantises every convolution of the detector (opset 9 Slice moved to opset 11) and finds the same face', async () => {
    const int8 = await quantise('fr_detect');
    const after = opsOf(int8).ops;
    expect(after.get('Conv') ?? 0).toBe(0);
    expect(after.get('QLinearConv')).toBe(opsOf(floatModel('fr_detect')).ops.get('Conv'));
    const x = probe.get('fr_detect')![0]!;
    const [f, q] = [await run(floatModel('fr_detect'), x), await run(int8, x)];
    const best = (o: Record<string, Float32Array>) => {
      let k = 0;
      for (let i = 1; i < o.scores!.length / 2; i++) if (o.scores![i * 2 + 1]! > o.scores![k * 2 + 1]!) k = i;
      return { score: o.scores![k * 2 + 1]!, box: Array.from(o.boxes!.subarray(k * 4, k * 4 + 4)) };
    };
    const [bf, bq] = [best(f), best(q)];
    expect(bf.score).toBeGreaterThan(0.9);
    expect(bq.score).toBeGreaterThan(0.9);
    const [a, b] = [bf.box, bq.box] as [number[], number[]];
    const inter =
      Math.max(0, Math.min(a[2]!, b[2]!) - Math.max(a[0]!, b[0]!)) *
      Math.max(0, Math.min(a[3]!, b[3]!) - Math.max(a[1]!, b[1]!));
    const area = (r: number[]) => (r[2]! - r[0]!) * (r[3]! - r[1]!);
    expect(inter / (area(a) + area(b) - inter)).toBeGreaterThan(0.8); // IoU of the best box of each
  });

  it('sets the subnormal weights of the embedding and gender models to zero, changing no output but subnormal ones', async () => {
    for (const id of ['fr_feature', 'fr_gender'] as const) {
      const float = floatModel(id);
      const { model, flushed } = flushSubnormalWeights(float);
      expect(flushed).toBeGreaterThan(1000); // 8938 and 13331 in the fetched files
      expect(flushSubnormalWeights(model).flushed).toBe(0);
      const x = probe.get(id)![0]!;
      const [a, b] = [await run(float, x), await run(model, x)];
      // The same bits, except an output that was itself subnormal (fr_gender's SSR-Net offsets: 2e-40 -> 0).
      const tiny = (v: number) => Math.abs(v) < 1.1754943508222875e-38;
      for (const k of Object.keys(a))
        for (let i = 0; i < a[k]!.length; i++) {
          if (b[k]![i] !== a[k]![i] && !(tiny(a[k]![i]!) && tiny(b[k]![i]!)))
            expect(`${id} ${k}[${i}]: ${b[k]![i]}`).toBe(`${id} ${k}[${i}]: ${a[k]![i]}`);
        }
    }
  });
});
