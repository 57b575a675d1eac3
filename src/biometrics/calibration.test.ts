import { describe, expect, it } from 'vitest';
import { cosineToScore, FACE_CALIBRATION, farToScore, MAX_SCORE, scoreToFar } from './calibration.js';
import manifest from '../../wasm/models/manifest.json' with { type: 'json' };

describe('score calibration', () => {
  it('uses the -12*log10(FAR) scale', () => {
    expect(scoreToFar(36)).toBeCloseTo(1e-3, 12);
    expect(scoreToFar(48)).toBeCloseTo(1e-4, 12);
    expect(farToScore(1e-5)).toBeCloseTo(60, 9);
    expect(farToScore(1e-30)).toBe(MAX_SCORE);
    expect(farToScore(1)).toBe(0);
  });

  it('ships a table for the current template version, monotone and within 0..200', () => {
    expect(FACE_CALIBRATION.templateVersion).toBe(manifest.templateVersion);
    let prev = -1;
    for (let c = -1; c <= 1.0001; c += 0.0025) {
      const s = cosineToScore(c);
      expect(s).toBeGreaterThanOrEqual(prev);
      expect(s).toBeGreaterThanOrEqual(0);
      expect(s).toBeLessThanOrEqual(MAX_SCORE);
      prev = s;
    }
    expect(cosineToScore(-1)).toBe(0);
    expect(cosineToScore(1)).toBeGreaterThan(100);
  });

  it('inverts scores to cosines', () => {
    for (const s of [20, 36, 48, 60, 72]) expect(cosineToScore(FACE_CALIBRATION.scoreToCosine(s))).toBeCloseTo(s, 6);
  });
});
