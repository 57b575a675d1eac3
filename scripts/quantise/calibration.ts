// Calibration data for the int8 quantiser: the real inputs of every face model, captured by running the
// ordinary face pipeline (onnxruntime-web, float models) over photos, and the activation ranges of a model
// over those inputs.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as ort from 'onnxruntime-web';
import { analyseImage } from '../../src/biometrics/face/pipeline.js';
import { FACE_MODELS, type FaceModelId, type ModelRunner } from '../../src/biometrics/face/runner.js';
import { nodeModelLoader, enableFastJpegNode } from '../../src/extraction/node-models.js';
import { OrtWebRunner } from '../../src/extraction/ort-web-runner.js';
import type { Range } from './onnx-int8.js';

/** One captured model input. */
export interface CapturedInput {
  data: Float32Array;
  dims: readonly number[];
}

/** Image files (jpg/png) directly inside each folder that exists, sorted. */
export function photosIn(dirs: readonly string[]): string[] {
  return dirs
    .filter((d) => existsSync(d))
    .flatMap((d) =>
      readdirSync(d)
        .filter((f) => /\.(jpe?g|png)$/i.test(f))
        .sort()
        .map((f) => join(d, f)),
    );
}

/**
 * Runs the full face pipeline (checks and attributes included, so every model sees faces) on each photo and
 * returns what each model was given. `perModel` caps the inputs kept per model (the first ones).
 */
export async function captureInputs(
  photos: readonly string[],
  perModel = 200,
): Promise<Map<FaceModelId, CapturedInput[]>> {
  await enableFastJpegNode();
  const inner = await OrtWebRunner.create({ loadModel: nodeModelLoader() });
  const seen = new Map<FaceModelId, CapturedInput[]>(FACE_MODELS.map((id) => [id, []]));
  const recording: ModelRunner = {
    run(model, input, dims) {
      const list = seen.get(model)!;
      if (list.length < perModel) list.push({ data: input.slice(), dims: [...dims] });
      return inner.run(model, input, dims);
    },
    release: () => inner.release(),
  };
  for (const p of photos) {
    try {
      await analyseImage(recording, new Uint8Array(await readFile(p)), {
        checks: true,
        attributes: true,
        liveness: true,
      });
    } catch {
      // an image the pipeline refuses calibrates nothing
    }
  }
  await inner.release();
  return seen;
}

/**
 * Activation ranges of `names` over the inputs: per tensor the `quantile`-th and (1 - quantile)-th order
 * statistics of all values seen (quantile 0: plain min and max).
 */
export async function activationRanges(
  model: Uint8Array,
  names: readonly string[],
  inputs: readonly CapturedInput[],
  quantile = 0,
): Promise<Map<string, Range>> {
  const s = await ort.InferenceSession.create(model, {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
  });
  const values = new Map<string, Float32Array[]>(names.map((n) => [n, []]));
  for (const x of inputs) {
    const t = new ort.Tensor('float32', x.data, x.dims);
    const out = await s.run({ input: t }, names as string[]);
    for (const n of names) values.get(n)!.push(new Float32Array(out[n]!.data as Float32Array));
    for (const v of Object.values(out)) v.dispose();
  }
  await s.release();
  const ranges = new Map<string, Range>();
  for (const [n, vs] of values) {
    if (quantile <= 0) {
      let min = Infinity,
        max = -Infinity;
      for (const v of vs)
        for (const x of v) {
          if (x < min) min = x;
          if (x > max) max = x;
        }
      ranges.set(n, { min, max });
    } else {
      const all = new Float32Array(vs.reduce((a, v) => a + v.length, 0));
      let o = 0;
      for (const v of vs) {
        all.set(v, o);
        o += v.length;
      }
      all.sort();
      const k = Math.floor(quantile * (all.length - 1));
      ranges.set(n, { min: all[k]!, max: all[all.length - 1 - k]! });
    }
  }
  return ranges;
}

/** Saves captured inputs (one file per model: a JSON header line, then the float32 data) for later runs. */
export function saveInputs(dir: string, inputs: ReadonlyMap<FaceModelId, readonly CapturedInput[]>): void {
  mkdirSync(dir, { recursive: true });
  for (const [id, list] of inputs) {
    const head = Buffer.from(JSON.stringify(list.map((x) => x.dims)) + '\n');
    writeFileSync(
      join(dir, `${id}.inputs`),
      Buffer.concat([head, ...list.map((x) => Buffer.from(x.data.buffer, x.data.byteOffset, x.data.byteLength))]),
    );
  }
}

/** Reads what `saveInputs` wrote for one model, or undefined when there is nothing. */
export function loadInputs(dir: string, id: FaceModelId): CapturedInput[] | undefined {
  const file = join(dir, `${id}.inputs`);
  if (!existsSync(file)) return undefined;
  const buf = readFileSync(file);
  const nl = buf.indexOf(10);
  const dims = JSON.parse(buf.subarray(0, nl).toString()) as number[][];
  let off = nl + 1;
  return dims.map((d) => {
    const n = d.reduce((a, b) => a * b, 1);
    const data = new Float32Array(buf.buffer.slice(buf.byteOffset + off, buf.byteOffset + off + n * 4));
    off += n * 4;
    return { data, dims: d };
  });
}
