import { describe, expect, it } from 'vitest';
import { resample } from './resample.js';

const sine = (f: number, rate: number, seconds: number) =>
  Float32Array.from({ length: Math.round(rate * seconds) }, (_, i) => Math.sin((2 * Math.PI * f * i) / rate));

/** RMS of a signal away from its edges (the filter sees zeros beyond them). */
function rms(x: Float32Array, skip = 200): number {
  let s = 0;
  for (let i = skip; i < x.length - skip; i++) s += x[i]! * x[i]!;
  return Math.sqrt(s / (x.length - 2 * skip));
}

describe('resample to 16 kHz', () => {
  for (const rate of [8000, 11025, 22050, 44100, 48000, 12345]) {
    it(`keeps a 1 kHz tone at ${rate} Hz intact`, () => {
      const out = resample(sine(1000, rate, 0.5), rate);
      expect(out.length).toBe(Math.ceil((Math.round(rate * 0.5) * 16000) / rate));
      const want = sine(1000, 16000, 0.5);
      let err = 0;
      for (let i = 200; i < out.length - 200; i++) err = Math.max(err, Math.abs(out[i]! - want[i]!));
      expect(err).toBeLessThan(2e-3);
    });
  }

  it('removes content above 8 kHz instead of folding it into the speech band (44.1 kHz, 12 kHz tone)', () => {
    const out = resample(sine(12000, 44100, 0.5), 44100);
    // Linear interpolation would leave an alias at 4 kHz with most of the tone's energy.
    expect(20 * Math.log10(rms(out) / Math.SQRT1_2)).toBeLessThan(-60);
  });

  it('returns the input unchanged at 16 kHz', () => {
    const x = sine(440, 16000, 0.1);
    expect(resample(x, 16000)).toBe(x);
  });
});
