import { MAX_SCORE } from './calibration.js';

/** Scores of one comparison per modality, on the -12*log10(FAR) scale; a missing modality is absent. */
export interface ModalityScores {
  FACE?: number;
  VOICE?: number;
}

const LAMBDA = Math.LN10 / 12;

/**
 * Score-level fusion on the calibrated scale (docs/fusion.md). Each modality's score s_i = -12*log10(FAR_i)
 * means that an impostor reaches it with probability 10^(-s_i/12): on this scale an impostor's score is
 * exponentially distributed with rate ln(10)/12. Assuming the modalities err independently, the impostor's
 * SUM of n scores follows a Gamma(n, ln(10)/12) law, so the sum t is converted back to the false-acceptance
 * scale through that law's tail:
 *
 *   FAR(t) = e^(-lambda t) * sum_{k<n} (lambda t)^k / k!,   fused = -12 * log10(FAR(t)),   lambda = ln(10)/12.
 *
 * One modality: the fused score is that score. Two: fused = t - 12*log10(1 + lambda*t). A strong face match
 * (48) with a voice that says "someone else" (0) fuses to 35.9; 48 and 48 fuse to 80.5; the scale keeps its
 * meaning (a fused 48 is still a false acceptance rate of 1e-4 under independence). Clamped to 0..200.
 *
 * @example
 * fuseScores({ FACE: 48, VOICE: 48 }); // 80.5
 * fuseScores({ FACE: 60 });            // 60
 */
export function fuseScores(scores: ModalityScores): number | null {
  const present = [scores.FACE, scores.VOICE].filter((s): s is number => typeof s === 'number' && Number.isFinite(s));
  if (present.length === 0) return null;
  if (present.length === 1) return clamp(present[0]!);
  const t = present.reduce((a, b) => a + b, 0);
  const x = LAMBDA * t;
  let term = 1,
    sum = 1;
  for (let k = 1; k < present.length; k++) {
    term *= x / k;
    sum += term;
  }
  return clamp(t - 12 * Math.log10(sum));
}

const clamp = (s: number) => (s <= 0 ? 0 : s > MAX_SCORE ? MAX_SCORE : s);
