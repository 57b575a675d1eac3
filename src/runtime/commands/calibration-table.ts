// The map from cosine to score = -12*log10(FAR), built from impostor cosines, and the check of a shipped map
// against impostors: what FAR each score claims and what share of impostors reaches it (scripts/eval-calibrate.ts,
// docs/calibration.md).
import { scoreToFar, type Calibration } from '../../biometrics/calibration.js';

/** Impostors needed above a cosine for its FAR to be read directly; below that the tail is extrapolated. */
const MIN_COUNT = 20;

/** Number of values of an ascending array at or above `c`. */
export function countAtOrAbove(sorted: Float64Array, c: number): number {
  let lo = 0,
    hi = sorted.length;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (sorted[m]! < c) lo = m + 1;
    else hi = m;
  }
  return sorted.length - lo;
}

export interface BuiltTable {
  points: [number, number][];
  /** Fitted slope of log10 FAR per unit of cosine over the upper tail. */
  slope: number;
  /** The highest knot whose FAR was read from the impostors, not extrapolated. */
  lastMeasuredCosine: number;
}

/**
 * Knots every 0.01 of cosine from ascending impostor cosines:
 *  1. FAR(c) = share of impostor cosines >= c, used directly where at least MIN_COUNT impostors lie above c;
 *  2. beyond that, log10 FAR is a straight line of the cosine fitted over the upper tail (FAR between
 *     MIN_COUNT/N and 5%), continued from the last measured knot. A straight line in log-space decays more
 *     slowly than a Gaussian tail, so extrapolated scores err low (the safe side);
 *  3. score = clamp(-12*log10(FAR), 0, 200), made non-decreasing.
 */
export function buildCalibrationPoints(impostors: Float64Array): BuiltTable {
  const N = impostors.length;
  const xs: number[] = [],
    ys: number[] = [];
  for (let c = -1; c <= 1; c += 0.005) {
    const k = countAtOrAbove(impostors, c);
    if (k >= MIN_COUNT && k <= 0.05 * N) {
      xs.push(c);
      ys.push(Math.log10(k / N));
    }
  }
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length,
    my = ys.reduce((a, b) => a + b, 0) / ys.length;
  const slope = xs.reduce((a, x, j) => a + (x - mx) * (ys[j]! - my), 0) / xs.reduce((a, x) => a + (x - mx) ** 2, 0);
  let lastC = -1,
    lastLog = 0,
    prev = 0;
  const points: [number, number][] = [];
  for (let j = 0; j <= 200; j++) {
    const c = Math.round((-1 + j * 0.01) * 100) / 100;
    const k = countAtOrAbove(impostors, c);
    let logFar: number;
    if (k >= MIN_COUNT) {
      logFar = Math.log10(k / N);
      lastC = c;
      lastLog = logFar;
    } else logFar = lastLog + slope * (c - lastC);
    const s = Math.max(prev, Math.min(200, Math.max(0, -12 * logFar)));
    prev = s;
    points.push([c, Math.round(s * 100) / 100]);
  }
  return { points, slope, lastMeasuredCosine: lastC };
}

/** P(X <= x) for X ~ Poisson(lambda), summed in log space. */
function poissonCdf(x: number, lambda: number): number {
  if (lambda <= 0) return 1;
  let term = -lambda,
    sum = Math.exp(term);
  for (let i = 1; i <= x; i++) {
    term += Math.log(lambda) - Math.log(i);
    sum += Math.exp(term);
  }
  return Math.min(1, sum);
}

/**
 * Exact 95% interval of a rate seen `count` times in `n` trials, for small rates (Poisson, two-sided 2.5% each
 * side). It treats the trials as independent: impostor pairs that share a photo are not, so the true interval
 * is wider (docs/calibration.md).
 */
export function rateInterval(count: number, n: number): [number, number] {
  const solve = (target: number, x: number) => {
    let lo = 0,
      hi = Math.max(10, 4 * (x + 10));
    for (let i = 0; i < 100; i++) {
      const mid = (lo + hi) / 2;
      if (poissonCdf(x, mid) > target) lo = mid;
      else hi = mid;
    }
    return (lo + hi) / 2;
  };
  const upper = solve(0.025, count) / n;
  const lower = count === 0 ? 0 : solve(0.975, count - 1) / n;
  return [lower, upper];
}

export interface FarCheck {
  score: number;
  claimedFar: number;
  impostorsAtOrAbove: number;
  comparisons: number;
  measuredFar: number;
  /** 95% interval of the measured FAR (independent comparisons assumed). */
  interval: [number, number];
}

/** For each score: the FAR it claims and the share of impostor scores at or above it. */
export function checkFar(impostorScores: Float64Array, scores: readonly number[]): FarCheck[] {
  const sorted = Float64Array.from(impostorScores).sort();
  return scores.map((score) => {
    const k = countAtOrAbove(sorted, score);
    return {
      score,
      claimedFar: scoreToFar(score),
      impostorsAtOrAbove: k,
      comparisons: sorted.length,
      measuredFar: k / sorted.length,
      interval: rateInterval(k, sorted.length),
    };
  });
}

/** Scores of impostor cosines under a calibration. */
export function scoresOf(cosines: Float64Array | Float32Array, calibration: Calibration): Float64Array {
  const out = new Float64Array(cosines.length);
  for (let i = 0; i < cosines.length; i++) out[i] = calibration.cosineToScore(cosines[i]!);
  return out;
}

/** One line per score: claimed FAR, measured FAR with its interval, and the counts. */
export function farLines(label: string, checks: FarCheck[]): string[] {
  return checks.map(
    (c) =>
      `${label.padEnd(22)} score ${String(c.score).padStart(3)}: claimed ${c.claimedFar.toExponential(0)}, measured ${c.measuredFar.toExponential(2)} ` +
      `(95% ${c.interval[0].toExponential(1)}..${c.interval[1].toExponential(1)}; ${c.impostorsAtOrAbove} of ${c.comparisons})${c.interval[0] > c.claimedFar ? '  OVER' : ''}`,
  );
}
