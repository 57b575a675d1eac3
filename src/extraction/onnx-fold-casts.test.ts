import { readFileSync } from 'node:fs';
import * as ort from 'onnxruntime-web';
import { describe, expect, it } from 'vitest';
import { MODELS_DIR } from './node-models.js';
import { foldHalfCasts, halfToFloatBits } from './onnx-fold-casts.js';
import { configureEnv } from './ort-web-runner.js';
import { VOICE_MODEL_FILE } from './ort-voice-runner.js';

const has = (b: Uint8Array, s: string) => Buffer.from(b.buffer, b.byteOffset, b.length).includes(s);

async function embed(model: Uint8Array, mels: Float32Array, batch: number): Promise<Float32Array> {
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
  });
  const out = await session.run({ mels: new ort.Tensor('float32', mels, [batch, 160, 40]) }, ['embedding']);
  const e = new Float32Array(out.embedding!.data as Float32Array);
  await session.release();
  return e;
}

describe('foldHalfCasts', () => {
  it("turns the voice model's float16 weight Casts into float32 weights with bit-identical outputs", async () => {
    configureEnv({});
    const original = new Uint8Array(readFileSync(MODELS_DIR + VOICE_MODEL_FILE));
    const folded = foldHalfCasts(original);
    expect(has(original, 'Cast')).toBe(true);
    expect(has(folded, 'Cast')).toBe(false);
    // 1.42 M weights now take 4 bytes instead of 2.
    expect(folded.length - original.length).toBeGreaterThan(2_800_000);
    // Speech-like input: positive power values over three partials.
    const mels = new Float32Array(3 * 160 * 40);
    for (let i = 0; i < mels.length; i++) mels[i] = Math.abs(Math.sin(i * 0.37)) * 10 ** ((i % 40) / 20 - 1);
    expect(await embed(folded, mels, 3)).toEqual(await embed(original, mels, 3));
  });

  it('returns bytes it cannot read, and models with nothing to fold, unchanged', () => {
    const junk = Uint8Array.from([0x3a, 0xff, 0xff, 0xff, 0x0f, 1, 2]);
    expect(foldHalfCasts(junk)).toBe(junk);
    const face = new Uint8Array(readFileSync(MODELS_DIR + 'fr_age.onnx'));
    expect(foldHalfCasts(face)).toBe(face);
    const voice = new Uint8Array(readFileSync(MODELS_DIR + VOICE_MODEL_FILE));
    const cut = voice.subarray(0, voice.length >> 1);
    expect(foldHalfCasts(cut)).toBe(cut);
  });

  it('widens every float16 value exactly (normals, subnormals, zeros, infinities, NaN)', () => {
    const bits = new DataView(new ArrayBuffer(4));
    for (let h = 0; h < 0x10000; h++) {
      const sign = h & 0x8000 ? -1 : 1,
        e = (h >> 10) & 31,
        m = h & 1023;
      const want =
        e === 0 ? sign * m * 2 ** -24 : e === 31 ? (m ? NaN : sign * Infinity) : sign * (1 + m / 1024) * 2 ** (e - 15);
      bits.setUint32(0, halfToFloatBits(h));
      expect(Object.is(bits.getFloat32(0), want), `half 0x${h.toString(16)}`).toBe(true);
    }
  });
});
