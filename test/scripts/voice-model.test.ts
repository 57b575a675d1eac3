import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { OrtVoiceRunner } from '../../src/extraction/ort-voice-runner.js';
import { hostileCheckpoint, legacyCheckpoint, Tensor, zipCheckpoint } from '../support/torch-checkpoint-writer.js';
import { resemblyzerCheckpointObject, SHARED_VOICE_DIR, sharedStateDict } from '../support/shared-voice-weights.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'bims-voice-model-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `npm run voice-model` as a user would (through tsx), answering its exit code and output. */
async function convert(
  checkpoint: Uint8Array,
  name: string,
): Promise<{ code: number; stdout: string; stderr: string; out: string }> {
  const from = join(dir, `${name}.pt`),
    out = join(dir, `${name}.onnx`);
  writeFileSync(from, checkpoint);
  try {
    const r = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'scripts/voice-model.ts', '--from', from, '--out', out],
      { cwd: root },
    );
    return { code: 0, stdout: r.stdout, stderr: r.stderr, out };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr, out };
  }
}

const f32 = (name: string) => {
  const b = readFileSync(new URL(name, SHARED_VOICE_DIR));
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
};

/** Largest difference between the model's embedding of the shared test vector and its reference output. */
async function testVectorDifference(modelFile: string): Promise<number> {
  const runner = await OrtVoiceRunner.create({ loadModel: async () => new Uint8Array(readFileSync(modelFile)) });
  try {
    const out = await runner.embed(f32('ref_in.f32'), 2),
      ref = f32('ref_out.f32');
    let max = 0;
    for (let i = 0; i < ref.length; i++) max = Math.max(max, Math.abs(out[i]! - ref[i]!));
    return max;
  } finally {
    await runner.release();
  }
}

describe('npm run voice-model: the speaker encoder from a Resemblyzer checkpoint', () => {
  it.each([
    ['zip', 'float32', () => zipCheckpoint(resemblyzerCheckpointObject())],
    ['zip', 'float16', () => zipCheckpoint(resemblyzerCheckpointObject(), 'float16')],
    ['legacy', 'float32', () => legacyCheckpoint(resemblyzerCheckpointObject())],
    ['legacy', 'float16', () => legacyCheckpoint(resemblyzerCheckpointObject(), 'float16')],
  ] as const)(
    'converts a %s-format checkpoint of %s storages into a model the service accepts and that reproduces the test vector',
    async (format, dtype, make) => {
      const r = await convert(make(), `${format}-${dtype}`);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`(${format} format)`);
      expect(r.stdout).toMatch(/test vector .*ref_out\.f32 reproduced/);
      // Its own bytes (not the manifest's hash), accepted by the runner's reference check, and the test vector
      // reproduced independently of the converter's own check.
      expect(await testVectorDifference(r.out)).toBeLessThan(1e-4);
      expect(readFileSync(r.out.replace(/\.onnx$/, '.README.md'), 'utf8')).toMatch(
        /Apache License 2\.0, Copyright 2019 Resemble\.AI/,
      );
    },
  );

  it('refuses a hostile pickle with a clear error, executes nothing and writes nothing', async () => {
    const marker = join(dir, 'pwned');
    const r = await convert(hostileCheckpoint(`touch ${marker}`), 'hostile');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot be converted: the pickle names the global os\.system, which is not allowed/);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(r.out)).toBe(false);
  });

  it('exits non-zero and writes nothing when the weights do not make the reference model', async () => {
    // The LSTM's gates in ONNX's order instead of PyTorch's: every shape is right, the network is not.
    const state = sharedStateDict().map(([name, t]): [string, Tensor] => {
      if (!name.startsWith('lstm.weight_ih')) return [name, t];
      const v = t.values.slice(),
        block = v.length / 4;
      v.set(t.values.subarray(block, 2 * block), 3 * block);
      v.set(t.values.subarray(3 * block), block);
      return [name, new Tensor(t.shape, v)];
    });
    const r = await convert(zipCheckpoint(resemblyzerCheckpointObject(state)), 'wrong-gates');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/fails its check, nothing written: .*differs by/);
    expect(existsSync(r.out)).toBe(false);
  });

  it('names what is missing when the checkpoint is not the encoder, and refuses files that are not checkpoints', async () => {
    const partial = sharedStateDict().filter(([name]) => name !== 'linear.bias');
    const missing = await convert(legacyCheckpoint(resemblyzerCheckpointObject(partial)), 'no-linear-bias');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/the state_dict has no tensor linear\.bias/);
    const junk = await convert(new TextEncoder().encode('not a checkpoint at all'), 'junk');
    expect(junk.code).toBe(1);
    expect(junk.stderr).toMatch(/not a PyTorch checkpoint/);
    const truncated = legacyCheckpoint(resemblyzerCheckpointObject());
    const cut = await convert(truncated.subarray(0, truncated.length - 1000), 'truncated');
    expect(cut.code).toBe(1);
    expect(cut.stderr).toMatch(/storage \S+ is truncated/);
  });
});
