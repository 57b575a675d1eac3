import { describe, expect, it } from 'vitest';
import { nodeModelLoader } from './node-models.js';
import { OrtWebRunner } from './ort-web-runner.js';

describe('model loading', () => {
  it('refuses a corrupt model file with MODEL_UNAVAILABLE naming the file', async () => {
    const real = nodeModelLoader();
    const corrupt = async (file: string) => {
      const b = await real(file);
      b[b.length >> 1] ^= 0xff;
      return b;
    };
    await expect(OrtWebRunner.create({ loadModel: corrupt, models: ['fr_eye'] })).rejects.toMatchObject({
      code: 'MODEL_UNAVAILABLE',
      message: expect.stringMatching(/fr_eye\.onnx is corrupt/),
    });
  });

  it('reports a missing model file with MODEL_UNAVAILABLE and the fetch command', async () => {
    await expect(
      OrtWebRunner.create({ loadModel: nodeModelLoader('/nonexistent'), models: ['fr_eye'] }),
    ).rejects.toMatchObject({
      code: 'MODEL_UNAVAILABLE',
      message: expect.stringMatching(/fetch-models/),
    });
  });

  it('loads and warms verified models', async () => {
    const r = await OrtWebRunner.create({ loadModel: nodeModelLoader(), models: ['fr_eye'] });
    const out = await r.run('fr_eye', new Float32Array(24 * 24).fill(0.5), [1, 1, 24, 24]);
    expect(out.output).toHaveLength(2);
    await r.release();
  });
});
