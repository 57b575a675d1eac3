import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import jpeg from 'jpeg-js';
import * as ort from 'onnxruntime-web';
import { describe, expect, it } from 'vitest';
import { MODELS_DIR } from './node-models.js';
import { splitPRelu } from './native-split-prelu.js';
import { fields, text } from './onnx-protobuf.js';
import { configureEnv } from './ort-web-runner.js';

const PHOTOS = join(import.meta.dirname, '../../test/fixtures/photos/labelled');

/** How many nodes of each operator type the model's graph has. */
function opTypes(model: Uint8Array): Record<string, number> {
  const counts: Record<string, number> = {};
  const graph = [...fields(model, 0, model.length)].find((f) => f.no === 7 && f.wire === 2)!;
  for (const node of fields(model, graph.body, graph.end)) {
    if (node.no !== 1 || node.wire !== 2) continue;
    for (const f of fields(model, node.body, node.end))
      if (f.no === 4 && f.wire === 2) counts[text(model, f)] = (counts[text(model, f)] ?? 0) + 1;
  }
  return counts;
}

/** A real photo resized (nearest) to the model's input, (v - 127) / 128. */
function input(photoPath: string, size: number): ort.Tensor {
  const image = jpeg.decode(readFileSync(photoPath), { useTArray: true });
  const data = new Float32Array(3 * size * size);
  for (let c = 0; c < 3; c++) {
    for (let y = 0; y < size; y++) {
      for (let x = 0; x < size; x++) {
        const sx = Math.floor((x * image.width) / size),
          sy = Math.floor((y * image.height) / size);
        data[c * size * size + y * size + x] = (image.data[(sy * image.width + sx) * 4 + c]! - 127) / 128;
      }
    }
  }
  return new ort.Tensor('float32', data, [1, 3, size, size]);
}

async function outputs(model: Uint8Array, feed: ort.Tensor): Promise<Float32Array[]> {
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
  });
  const out = await session.run({ [session.inputNames[0]!]: feed });
  const values = session.outputNames.map((name) => new Float32Array(out[name]!.data as Float32Array));
  await session.release();
  return values;
}

describe("splitPRelu (the native backend's load-time rewrite)", () => {
  configureEnv({});
  const photos = ['audrey', 'cage'].map((who) => join(PHOTOS, who, readdirSync(join(PHOTOS, who)).sort()[0]!));

  // onnxruntime-web runs both forms here: any host can check that the split computes the same numbers (the
  // arithmetic is exact in any runtime); the native speed-up itself is measured in docs/extraction.md.
  it.each([
    ['fr_feature.onnx', 112],
    ['fr_liveness.onnx', 128],
  ] as const)(
    '%s: no PRelu left, the outputs on real photos the same bit for bit',
    async (file, size) => {
      const original = new Uint8Array(readFileSync(join(MODELS_DIR, file)));
      const split = splitPRelu(original);
      const before = opTypes(original),
        after = opTypes(split);
      expect(before.PRelu).toBeGreaterThan(10);
      expect(after.PRelu).toBeUndefined();
      expect(after.Neg).toBe(before.PRelu);
      expect(after.Mul ?? 0).toBe((before.Mul ?? 0) + before.PRelu!);
      expect(splitPRelu(split)).toBe(split); // nothing left to split
      for (const photo of photos) {
        const feed = input(photo, size);
        const [a, b] = [await outputs(original, feed), await outputs(split, feed)];
        expect(b.length).toBe(a.length);
        for (let o = 0; o < a.length; o++) expect(Array.from(b[o]!)).toEqual(Array.from(a[o]!));
      }
    },
    120_000,
  );

  it('leaves a model without PRelu, and bytes that are not a model, as they are', () => {
    const detector = new Uint8Array(readFileSync(join(MODELS_DIR, 'fr_detect.onnx')));
    expect(splitPRelu(detector)).toBe(detector);
    const junk = Uint8Array.of(1, 2, 3, 4, 5);
    expect(splitPRelu(junk)).toBe(junk);
  });
});
