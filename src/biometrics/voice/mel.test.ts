import { describe, expect, it } from 'vitest';
import { Fft } from './fft.js';
import { MelSpectrogram, frameCount, hzToMel, melFilterBank, melToHz } from './mel.js';

/** The textbook O(n^2) DFT, as the independent reference. */
function naiveDft(x: ArrayLike<number>): { re: Float64Array; im: Float64Array } {
  const n = x.length,
    re = new Float64Array(n),
    im = new Float64Array(n);
  for (let k = 0; k < n; k++)
    for (let t = 0; t < n; t++) {
      re[k]! += x[t]! * Math.cos((2 * Math.PI * k * t) / n);
      im[k]! -= x[t]! * Math.sin((2 * Math.PI * k * t) / n);
    }
  return { re, im };
}

function noise(n: number, seed = 1): Float64Array {
  let s = seed;
  return Float64Array.from({ length: n }, () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1);
}

describe('Fft', () => {
  for (const n of [400, 200, 16, 25, 12, 7, 1]) {
    it(`matches the naive DFT for n = ${n}`, () => {
      const x = noise(n, n);
      const re = Float64Array.from(x),
        im = new Float64Array(n);
      new Fft(n).forward(re, im);
      const ref = naiveDft(x);
      for (let k = 0; k < n; k++) {
        expect(re[k]).toBeCloseTo(ref.re[k]!, 9);
        expect(im[k]).toBeCloseTo(ref.im[k]!, 9);
      }
    });
  }
});

describe('mel front end', () => {
  it('uses the Slaney scale (linear to 1 kHz, log above) and inverts it', () => {
    expect(hzToMel(1000)).toBeCloseTo(15, 12);
    expect(hzToMel(500)).toBeCloseTo(7.5, 12);
    for (const f of [0, 300, 1000, 3000, 8000]) expect(melToHz(hzToMel(f))).toBeCloseTo(f, 8);
  });

  it('has Slaney-normalised triangles between mel-spaced edges (first band: 0, 73.6, 147.2 Hz)', () => {
    const w = melFilterBank();
    expect(w.length).toBe(40 * 201);
    for (let b = 0; b < 40; b++) expect(Math.max(...w.subarray(b * 201, (b + 1) * 201))).toBeGreaterThan(0);
    // 40 bands up to 8 kHz: mel(8000) = 15 + ln 8 / (ln 6.4 / 27) = 45.245; edges every 45.245 / 41 mel.
    const e1 = (200 / 3) * (45.245 / 41),
      e2 = 2 * e1; // both below 1 kHz: linear part of the scale
    const area = 2 / e2;
    expect(w[1]).toBeCloseTo((40 / e1) * area, 5); // 40 Hz: rising edge
    expect(w[3]).toBeCloseTo(((e2 - 120) / e1) * area, 5); // 120 Hz: falling edge
    expect(w[4]).toBe(0); // 160 Hz: past the band
  });

  it('equals power spectra from a naive DFT of periodic-Hann-windowed, reflect-padded frames', () => {
    const x = Float32Array.from(noise(1000, 7));
    const frames = new MelSpectrogram().compute(x);
    expect(frames.length).toBe(frameCount(1000) * 40);
    expect(frameCount(1000)).toBe(7);
    const bank = melFilterBank();
    const reflect = (i: number) => (i < 0 ? -i : i >= x.length ? 2 * (x.length - 1) - i : i);
    for (const f of [0, 3, 6]) {
      const frame = Array.from(
        { length: 400 },
        (_, t) => x[reflect(f * 160 - 200 + t)]! * (0.5 - 0.5 * Math.cos((2 * Math.PI * t) / 400)),
      );
      const { re, im } = naiveDft(frame);
      for (const b of [0, 10, 25, 39]) {
        let want = 0;
        for (let k = 0; k <= 200; k++) want += bank[b * 201 + k]! * (re[k]! ** 2 + im[k]! ** 2);
        expect(frames[f * 40 + b]! / want).toBeCloseTo(1, 5);
      }
    }
  });

  it('keeps digital silence silent beside loud speech (frames are transformed two at a time)', () => {
    // Noise up to sample 1240, then zeros: frame 8 (samples 1080-1479) is loud, frame 9 (from 1240) silent, and
    // the two share one FFT.
    const x = new Float32Array(3200);
    x.set(Float32Array.from(noise(1240, 3)));
    const frames = new MelSpectrogram().compute(x);
    const loud = Math.max(...frames.subarray(8 * 40, 9 * 40));
    expect(loud).toBeGreaterThan(0.1);
    for (let f = 9; f < frameCount(x.length); f++)
      for (let b = 0; b < 40; b++) expect(frames[f * 40 + b]! / loud).toBeLessThan(1e-25);
  });
});
