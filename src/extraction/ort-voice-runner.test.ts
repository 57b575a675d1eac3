import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nodeModelLoader } from './node-models.js';
import { OrtVoiceRunner } from './ort-voice-runner.js';

const shared = new URL('../../../shared/models/voice/', import.meta.url);
const f32 = (name: string) => {
  const b = readFileSync(new URL(name, shared));
  return new Float32Array(b.buffer, b.byteOffset, b.length / 4);
};

describe('voice model runner', () => {
  it('reproduces the model test vector (ref_in -> ref_out)', async () => {
    const runner = await OrtVoiceRunner.create({ loadModel: nodeModelLoader() });
    const out = await runner.embed(f32('ref_in.f32').slice(), 2);
    const ref = f32('ref_out.f32');
    let max = 0;
    for (let i = 0; i < ref.length; i++) max = Math.max(max, Math.abs(out[i]! - ref[i]!));
    expect(out.length).toBe(512);
    expect(max).toBeLessThan(2e-6);
    await runner.release();
  });

  it('names the missing model file and how to get it', async () => {
    await expect(OrtVoiceRunner.create({ loadModel: nodeModelLoader('/nonexistent') })).rejects.toMatchObject({
      code: 'MODEL_UNAVAILABLE',
      message: expect.stringMatching(/resemblyzer_ge2e_fp16w\.onnx is missing.*fetch-voice-model.*BIMS_VOICE_MODEL/),
    });
  });

  it('refuses a corrupt model file: its hash differs and so does its embedding of the reference input', async () => {
    const real = nodeModelLoader();
    // 4 KiB of the second layer's recurrent weights inverted (one flipped low byte changes the output by less
    // than the tolerance, and such a file is accepted as the same model).
    const corrupt = async (file: string) => {
      const b = await real(file);
      for (let i = 0; i < 4096; i++) b[(b.length >> 1) + i] ^= 0xff;
      return b;
    };
    await expect(OrtVoiceRunner.create({ loadModel: corrupt })).rejects.toMatchObject({
      code: 'MODEL_UNAVAILABLE',
      message: expect.stringMatching(
        /is corrupt or a different model \(sha256 [0-9a-f]{64}, manifest [0-9a-f]{64}; its embedding of the reference input differs by/,
      ),
    });
  });

  it('reads the file BIMS_VOICE_MODEL names instead of the models folder', async () => {
    const before = process.env.BIMS_VOICE_MODEL;
    process.env.BIMS_VOICE_MODEL = new URL('resemblyzer_ge2e_fp16w.onnx', shared).pathname;
    try {
      const runner = await OrtVoiceRunner.create({ loadModel: nodeModelLoader('/nonexistent') });
      await runner.release();
    } finally {
      if (before === undefined) delete process.env.BIMS_VOICE_MODEL;
      else process.env.BIMS_VOICE_MODEL = before;
    }
  });
});
