import table from '../../wasm/models/calibration.json' with { type: 'json' };
import voiceTable from '../../wasm/models/voice-calibration.json' with { type: 'json' };

/** Highest score reported (scores are clamped to 0..MAX_SCORE). */
export const MAX_SCORE = 200;

/** A calibration table: monotone (cosine, score) knots, score = -12 * log10(FAR). */
export interface CalibrationTable {
  templateVersion: string;
  /** Ascending cosines with non-decreasing scores. */
  points: [number, number][];
  /** How the table was built (free-form, for humans). */
  method?: unknown;
}

/**
 * Maps cosine similarity to the false-acceptance scale and back, by linear interpolation between the
 * knots of a table measured on impostor comparisons (see docs/template-format.md, "Scores").
 */
export class Calibration {
  private readonly cos: Float64Array;
  private readonly score: Float64Array;
  constructor(readonly table: CalibrationTable) {
    this.cos = Float64Array.from(table.points.map((p) => p[0]));
    this.score = Float64Array.from(table.points.map((p) => p[1]));
  }

  get templateVersion(): string {
    return this.table.templateVersion;
  }

  /** Score 0..200 on the -12*log10(FAR) scale for a cosine. */
  cosineToScore(c: number): number {
    const x = this.cos,
      y = this.score,
      n = x.length;
    if (!(c > x[0])) return clampScore(y[0]);
    if (c >= x[n - 1]) return clampScore(y[n - 1]);
    let lo = 0,
      hi = n - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (x[mid] <= c) lo = mid;
      else hi = mid;
    }
    const t = (c - x[lo]) / (x[hi] - x[lo]);
    return clampScore(y[lo] + t * (y[hi] - y[lo]));
  }

  /** Smallest cosine whose score reaches `score` (for thresholding in cosine space). */
  scoreToCosine(score: number): number {
    const x = this.cos,
      y = this.score,
      n = x.length;
    if (score <= y[0]) return -1;
    if (score > y[n - 1]) return Infinity;
    for (let i = 1; i < n; i++) {
      if (y[i] >= score) {
        const t = y[i] === y[i - 1] ? 0 : (score - y[i - 1]) / (y[i] - y[i - 1]);
        return x[i - 1] + t * (x[i] - x[i - 1]);
      }
    }
    return Infinity;
  }
}

const clampScore = (s: number) => (s <= 0 ? 0 : s > MAX_SCORE ? MAX_SCORE : s);

/** False acceptance rate of a score: 10^(-score/12). E.g. 48 -> 1e-4. */
export function scoreToFar(score: number): number {
  return Math.pow(10, -score / 12);
}

/** Score of a false acceptance rate: -12*log10(FAR), clamped to 0..200. */
export function farToScore(far: number): number {
  return clampScore(-12 * Math.log10(far));
}

/** The calibration shipped with the current face model set (wasm/models/calibration.json). */
export const FACE_CALIBRATION: Calibration = new Calibration(table as unknown as CalibrationTable);

/** Score of a face cosine under the shipped calibration. */
export function cosineToScore(c: number): number {
  return FACE_CALIBRATION.cosineToScore(c);
}

/** The calibration shipped with the speaker encoder (wasm/models/voice-calibration.json). */
export const VOICE_CALIBRATION: Calibration = new Calibration(voiceTable as unknown as CalibrationTable);

/** The calibration of a modality's current model. */
export function calibrationOf(modality: 'face' | 'voice'): Calibration {
  return modality === 'voice' ? VOICE_CALIBRATION : FACE_CALIBRATION;
}
