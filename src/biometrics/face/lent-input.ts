// A face analysis ran about 1.7 MB of model input tensors per face through fresh ArrayBuffers (the detector's
// 921 KB, the pose model's 602 KB, the embedding's 150 KB), and in the extraction workers that external
// memory was what set off most of their garbage collections. The inputs are now lent for one run each.
import { giveBackF32, lendF32 } from '../image/scratch.js';
import type { FaceModelId, ModelRunner } from './runner.js';

/**
 * Runs `model` on the tensor `fill` writes (every element of the array it is given, of the size `dims` make),
 * in an array lent for this run alone and given back when it is over, answer or error.
 */
export async function runOnLentInput(
  runner: ModelRunner,
  model: FaceModelId,
  dims: readonly number[],
  fill: (into: Float32Array) => Float32Array,
): Promise<Record<string, Float32Array>> {
  const input = lendF32(dims.reduce((a, b) => a * b, 1));
  try {
    return await runner.run(model, fill(input), dims);
  } finally {
    giveBackF32(input);
  }
}
