// The calibration builder and its check on impostor cosines of a known law: a table built from impostors claims
// the FAR they show, and the check finds a table that claims too little.
import { describe, expect, it } from 'vitest';
import { Calibration } from '../../biometrics/calibration.js';
import { subjectScore } from '../../biometrics/subject-score.js';
import { buildCalibrationPoints, checkFar, countAtOrAbove, rateInterval, scoresOf } from './calibration-table.js';

/** n impostor cosines from a normal law (mean 0.02, sd 0.1, as the face model's impostors), ascending. */
function impostors(n: number, seed = 5): Float64Array {
  let s = seed;
  const u = () => (s = (s * 16807) % 2147483647) / 2147483647;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i += 2) {
    const r = Math.sqrt(-2 * Math.log(u())),
      t = 2 * Math.PI * u();
    out[i] = 0.02 + 0.1 * r * Math.cos(t);
    if (i + 1 < n) out[i + 1] = 0.02 + 0.1 * r * Math.sin(t);
  }
  return out.sort();
}

describe('calibration table', () => {
  const imp = impostors(400_000);
  const built = buildCalibrationPoints(imp);
  const cal = new Calibration({ templateVersion: 't', points: built.points });

  it('is monotone, within 0..200, and claims the FAR its impostors show where they are counted', () => {
    let prev = -1;
    for (const [, s] of built.points) {
      expect(s).toBeGreaterThanOrEqual(prev);
      expect(s).toBeLessThanOrEqual(200);
      prev = s;
    }
    // 400,000 impostors measure FAR down to 20/400,000 = 5e-5 (score 51.6): at 36 and 48 the claim is the count
    for (const check of checkFar(scoresOf(imp, cal), [24, 36, 48])) {
      expect(check.measuredFar).toBeGreaterThan(check.claimedFar * 0.8);
      expect(check.measuredFar).toBeLessThan(check.claimedFar * 1.25);
    }
    expect(built.lastMeasuredCosine).toBeGreaterThan(0.35);
  });

  it('extrapolates the tail on the safe side: fresh impostors of the same law never beat the claim at 60', () => {
    const fresh = impostors(1_000_000, 77);
    const [at60] = checkFar(scoresOf(fresh, cal), [60]);
    // a Gaussian tail falls faster than the fitted straight line in log space
    expect(at60!.measuredFar).toBeLessThanOrEqual(at60!.claimedFar);
  });

  it('finds a table that claims too little FAR (every score 12 points too high, FAR ten times the claim)', () => {
    const proud = new Calibration({ templateVersion: 't', points: built.points.map(([c, s]) => [c, s + 12]) });
    const [at36, at48] = checkFar(scoresOf(imp, proud), [36, 48]);
    expect(at36!.interval[0]).toBeGreaterThan(at36!.claimedFar);
    expect(at48!.interval[0]).toBeGreaterThan(at48!.claimedFar);
  });

  it('scores the best of k impostor comparisons at the FAR it claims once counted as k comparisons', () => {
    // subjects of 3 samples: the best of 3 independent impostor cosines, 200,000 times
    const best = new Float64Array(200_000);
    const pool = impostors(600_000, 9);
    let s = 3;
    const pick = () => pool[(s = (s * 48271) % 2147483647) % pool.length]!;
    for (let i = 0; i < best.length; i++) best[i] = Math.max(pick(), pick(), pick());
    const raw = checkFar(scoresOf(best, cal), [36])[0]!;
    const counted = checkFar(
      best.map((c) => subjectScore(cal.cosineToScore(c), 3)),
      [36],
    )[0]!;
    // the raw best-sample score claims a third of the FAR it has; counted as three comparisons it claims it
    // (about 200 of 200,000 impostors reach 36: within sampling error of the claim, seeds fixed)
    expect(raw.measuredFar / raw.claimedFar).toBeGreaterThan(2.4);
    expect(counted.measuredFar / counted.claimedFar).toBeGreaterThan(0.7);
    expect(counted.measuredFar / counted.claimedFar).toBeLessThan(1.4);
    expect(raw.measuredFar / counted.measuredFar).toBeGreaterThan(2.4);
  });

  it('counts and bounds rates', () => {
    expect(countAtOrAbove(Float64Array.from([0.1, 0.2, 0.2, 0.3]), 0.2)).toBe(3);
    const [lo, hi] = rateInterval(0, 1_000_000);
    expect(lo).toBe(0);
    expect(hi).toBeCloseTo(3.69e-6, 7); // the "rule of 3.7" for none seen, two-sided 95%
    const [lo10, hi10] = rateInterval(10, 100_000);
    expect(lo10).toBeCloseTo(4.8e-5, 6);
    expect(hi10).toBeCloseTo(1.839e-4, 6);
  });
});
