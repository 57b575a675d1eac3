import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import jpeg from 'jpeg-js';
import * as ort from 'onnxruntime-web';
import { describe, expect, it } from 'vitest';
import { MODELS_DIR } from './node-models.js';
import { flushSubnormalWeights } from './onnx-flush-subnormals.js';
import { configureEnv } from './ort-web-runner.js';

const PHOTOS = join(import.meta.dirname, '../../test/fixtures/photos/labelled');
const FLT_MIN = 2 ** -126;

/** Subnormal float32 values among a model's bytes, read the way the rewrite reads them (whole file, aligned or not). */
function subnormalsChanged(original: Uint8Array, flushed: Uint8Array): number {
  let changed = 0;
  for (let i = 0; i < original.length; i++) if (original[i] !== flushed[i]) changed++;
  return changed;
}

/** A real photo resized (nearest) to the model's input, scaled as most of these models take it. */
function input(photoPath: string, channels: number, height: number, width: number): ort.Tensor {
  const image = jpeg.decode(readFileSync(photoPath), { useTArray: true });
  const data = new Float32Array(channels * height * width);
  for (let c = 0; c < channels; c++) {
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const sx = Math.floor((x * image.width) / width),
          sy = Math.floor((y * image.height) / height);
        data[c * height * width + y * width + x] =
          (image.data[(sy * image.width + sx) * 4 + (channels === 1 ? 1 : c)]! - 127) / 128;
      }
    }
  }
  return new ort.Tensor('float32', data, [1, channels, height, width]);
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

const MODELS: [file: string, channels: number, height: number, width: number][] = [
  ['fr_feature.onnx', 3, 112, 112],
  ['fr_landmark.onnx', 1, 64, 64],
  ['fr_gender.onnx', 3, 64, 64],
  ['fr_age.onnx', 3, 64, 64],
  ['fr_detect.onnx', 3, 240, 320],
];

describe('flushSubnormalWeights', () => {
  configureEnv({});
  const photos = ['audrey', 'cage'].map((who) => join(PHOTOS, who, readdirSync(join(PHOTOS, who)).sort()[0]!));

  it.each(MODELS)(
    '%s: subnormal weights become zero, the outputs on real photos stay the same bit for bit',
    async (file, channels, height, width) => {
      const original = new Uint8Array(readFileSync(join(MODELS_DIR, file)));
      const flushed = flushSubnormalWeights(original);
      expect(flushed.length).toBe(original.length);
      if (file !== 'fr_detect.onnx') expect(subnormalsChanged(original, flushed)).toBeGreaterThan(1000); // these hold thousands
      // Flushing twice changes nothing more.
      expect(flushSubnormalWeights(flushed)).toBe(flushed);
      for (const photo of photos) {
        const feed = input(photo, channels, height, width);
        const [before, after] = [await outputs(original, feed), await outputs(flushed, feed)];
        for (let o = 0; o < before.length; o++) {
          for (let i = 0; i < before[o]!.length; i++) {
            // An output that was itself subnormal may become 0: the same value to every use made of it.
            if (Math.abs(before[o]![i]!) < FLT_MIN) expect(Math.abs(after[o]![i]!)).toBeLessThan(FLT_MIN);
            else expect(after[o]![i]).toBe(before[o]![i]);
          }
        }
      }
    },
    120_000,
  );

  it('leaves bytes that are not an ONNX model as they are', () => {
    const junk = Uint8Array.of(1, 2, 3, 4, 5);
    expect(flushSubnormalWeights(junk)).toBe(junk);
  });
});
