/**
 * A functional check of a speaker encoder: the embedding the shipped model gives for a fixed input.
 *
 * Why: the manifest's SHA-256 names one file, but the same network can be rebuilt from the upstream weights
 * (`npm run voice-model -- --from pretrained.pt`) into a file with other bytes (its own metadata, biases laid
 * out differently). Such a file is accepted when it embeds this input as the shipped model does, within
 * REFERENCE_TOLERANCE per value: then its templates are the same version's and comparable with stored ones.
 * The input is generated (integer arithmetic, the same bits on every runtime) so nothing binary ships with it;
 * the expected embedding is in wasm/models/voice-reference.json, computed once from the shipped model.
 */
import reference from '../../wasm/models/voice-reference.json' with { type: 'json' };

/** Frames and mel bands of one partial. */
const FRAMES = 160,
  BANDS = 40;

/** Largest difference allowed per embedding value (the embedding is L2-normalised). */
export const REFERENCE_TOLERANCE = 1e-4;

/**
 * One partial of power-mel-like values: a smooth spectral envelope moving over time times pseudo-random
 * detail, spanning about five decades as speech does.
 */
export function referenceMels(): Float32Array {
  const out = new Float32Array(FRAMES * BANDS);
  let s = 0x9e3779b9;
  for (let t = 0; t < FRAMES; t++) {
    for (let m = 0; m < BANDS; m++) {
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      s >>>= 0; // xorshift32
      const noise = s / 2 ** 32;
      const envelope = 0.5 + 0.5 * Math.cos((2 * Math.PI * (m + 0.3 * t)) / 23);
      out[t * BANDS + m] = 10 ** (-5 + 3 * envelope + 2 * noise);
    }
  }
  return out;
}

/** The expected embedding of referenceMels(). */
const REFERENCE_EMBEDDING: readonly number[] = reference.embedding;

/** Largest absolute difference between an embedding of referenceMels() and the expected one. */
export function referenceDifference(embedding: Float32Array): number {
  if (embedding.length !== REFERENCE_EMBEDDING.length) return Infinity;
  let max = 0;
  for (let i = 0; i < embedding.length; i++) max = Math.max(max, Math.abs(embedding[i]! - REFERENCE_EMBEDDING[i]!));
  return Number.isNaN(max) ? Infinity : max;
}
