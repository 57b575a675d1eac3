import { describe, expect, it } from 'vitest';
import { fuseScores } from './fusion.js';

describe('fuseScores', () => {
  it('passes a single modality through and has nothing to say without one', () => {
    expect(fuseScores({ FACE: 60 })).toBe(60);
    expect(fuseScores({ VOICE: 12.5 })).toBe(12.5);
    expect(fuseScores({})).toBeNull();
  });

  it('combines two modalities through the tail of the sum of two impostor scores', () => {
    expect(fuseScores({ FACE: 48, VOICE: 48 })).toBeCloseTo(96 - 12 * Math.log10(1 + (Math.LN10 / 12) * 96), 10);
    expect(fuseScores({ FACE: 48, VOICE: 48 })!).toBeCloseTo(80.5, 1);
    // A contradicting modality pulls a borderline match below the default threshold of 48.
    expect(fuseScores({ FACE: 48, VOICE: 0 })!).toBeCloseTo(35.9, 1);
    expect(fuseScores({ FACE: 200, VOICE: 200 })).toBe(200);
  });

  it('is the false-acceptance scale of the sum: simulated impostors reach a fused score s with probability 10^(-s/12)', () => {
    let seed = 42; // mulberry32
    const rand = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    // Impostor scores on the calibrated scale: P(s >= x) = 10^(-x/12), i.e. exponential with rate ln(10)/12.
    const impostor = () => -Math.log(1 - rand()) / (Math.LN10 / 12);
    const n = 200_000;
    let above = 0;
    for (let i = 0; i < n; i++) if (fuseScores({ FACE: impostor(), VOICE: impostor() })! >= 24) above++;
    expect(above / n).toBeGreaterThan(0.0095);
    expect(above / n).toBeLessThan(0.0105); // 10^(-24/12) = 1%
  });
});
