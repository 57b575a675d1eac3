import { describe, expect, it } from 'vitest';
import { judgeShare, shareLimits } from './fair-share.js';

describe('the fair share of a media resource', () => {
  const limits = shareLimits(4, 16);

  it('keeps the last per-owner-many places for owners that hold none', () => {
    expect(limits).toEqual({ perOwner: 4, total: 16, reserve: 4, newcomer: 1 });
    expect(judgeShare({ mine: 3, total: 11 }, limits)).toBeNull();
    expect(judgeShare({ mine: 4, total: 4 }, limits)).toBe('owner-cap');
    expect(judgeShare({ mine: 1, total: 12 }, limits)).toBe('reserved');
    expect(judgeShare({ mine: 0, total: 12 }, limits)).toBeNull();
    expect(judgeShare({ mine: 0, total: 15 }, limits)).toBeNull();
    expect(judgeShare({ mine: 0, total: 16 }, limits)).toBe('full');
  });

  it('one owner alone never reaches the reserve, whatever it asks', () => {
    let held = 0;
    while (judgeShare({ mine: held, total: held }, limits) === null) held++;
    expect(held).toBe(4);
    expect(16 - held).toBeGreaterThanOrEqual(limits.reserve);
  });

  it('a newcomer of decoders may take one capture’s two (video and audio) in the reserve', () => {
    const decoders = shareLimits(8, 32, 2);
    expect(judgeShare({ mine: 1, total: 30 }, decoders)).toBeNull();
    expect(judgeShare({ mine: 2, total: 30 }, decoders)).toBe('reserved');
  });
});
