/**
 * From checkpoint bytes to an installed speaker encoder, in the steps `npm run voice-model` reports: convert
 * (data-only reader, nothing in the file runs), check (the runner's reference embedding, and the test vector
 * where one is found), install (a temporary file renamed into place, so a reader never sees half a model).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OrtVoiceRunner } from '../../src/extraction/ort-voice-runner.js';
import { readCheckpoint } from './torch-checkpoint.js';
import { resemblyzerWeights } from './resemblyzer.js';
import { ge2eOnnx } from './ge2e-onnx.js';

/** Largest difference allowed between the model's output and the test vector's. */
export const TOLERANCE = 1e-4;

export const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** The model was built but fails a check: nothing may be written. */
export class ModelCheckFailed extends Error {
  override name = 'ModelCheckFailed';
}

/**
 * The encoder's ONNX bytes from a checkpoint. The model's bytes depend only on the weights (rounded to float16
 * as the model version has them), not on the checkpoint's format or name, so the published weights always give
 * the same file and its SHA-256 can be pinned.
 * @throws Error naming what cannot be read (not a checkpoint, a refused pickle opcode, a missing tensor).
 */
export function convertCheckpoint(checkpoint: Uint8Array): { model: Uint8Array; format: string } {
  const { object, format } = readCheckpoint(checkpoint);
  return { model: ge2eOnnx(resemblyzerWeights(object)), format };
}

const f32 = (file: string) => {
  const b = readFileSync(file);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
};

/**
 * Loads the model as the service would (the runner accepts it only when it reproduces the reference
 * embedding) and, when `vectorDir` holds ref_in.f32 and ref_out.f32, compares its output with them.
 * @returns a sentence saying what was checked.
 * @throws ModelCheckFailed saying what differs.
 */
export async function checkModel(model: Uint8Array, vectorDir: string): Promise<string> {
  let runner: OrtVoiceRunner;
  try {
    runner = await OrtVoiceRunner.create({ loadModel: async () => model });
  } catch (error) {
    throw new ModelCheckFailed(`the converted model fails its check, nothing written: ${(error as Error).message}`);
  }
  try {
    const input = join(vectorDir, 'ref_in.f32'),
      output = join(vectorDir, 'ref_out.f32');
    if (!existsSync(input) || !existsSync(output))
      return `no test vector in ${vectorDir}; the built-in reference embedding was reproduced`;
    const x = f32(input),
      expected = f32(output);
    const got = await runner.embed(x, x.length / (160 * 40));
    let max = got.length === expected.length ? 0 : Number.POSITIVE_INFINITY;
    for (let i = 0; i < expected.length && max < Number.POSITIVE_INFINITY; i++)
      max = Math.max(max, Math.abs(got[i]! - expected[i]!));
    if (!(max <= TOLERANCE))
      throw new ModelCheckFailed(
        `the converted model differs from the test vector in ${vectorDir} by ${max.toPrecision(3)} (more than ${TOLERANCE}): nothing written`,
      );
    return `test vector ${output} reproduced (max difference ${max.toPrecision(3)})`;
  } finally {
    await runner.release();
  }
}

/** Writes the model and its README (provenance and licence) beside it; the model appears whole or not at all. */
export function installModel(out: string, model: Uint8Array, provenance: string): void {
  const tmp = `${out}.tmp`;
  try {
    writeFileSync(tmp, model);
    renameSync(tmp, out);
  } finally {
    rmSync(tmp, { force: true });
  }
  writeFileSync(
    out.replace(/\.onnx$/, '.README.md'),
    `# ${out.split('/').pop()}\n\nGE2E speaker encoder built by \`npm run voice-model\` (model sha256 ${sha256Hex(model)}) from ${provenance}.\n\nWeights: resemble-ai/Resemblyzer pretrained.pt, Apache License 2.0, Copyright 2019 Resemble.AI.\n`,
  );
}
