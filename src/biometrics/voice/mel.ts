import { Fft } from './fft.js';

/**
 * The speaker encoder's front end, exactly as Resemblyzer computes it with librosa's defaults
 * (../shared/models/voice/README.md): 16 kHz mono, n_fft 400 (25 ms), hop 160 (10 ms), periodic Hann
 * window, frames centred with reflect padding, POWER spectrum (|X|^2), 40 mel bands from 0 to 8000 Hz on
 * the Slaney scale with Slaney area normalisation. No log, no mean normalisation.
 */
export const MEL = Object.freeze({ sampleRate: 16000, nFft: 400, hop: 160, bands: 40, fMin: 0, fMax: 8000 });

/** Slaney mel scale (librosa htk=False): linear below 1 kHz, logarithmic above. */
export function hzToMel(f: number): number {
  const fSp = 200 / 3,
    minLogHz = 1000,
    minLogMel = minLogHz / fSp,
    logStep = Math.log(6.4) / 27;
  return f >= minLogHz ? minLogMel + Math.log(f / minLogHz) / logStep : f / fSp;
}

/** Inverse of hzToMel. */
export function melToHz(m: number): number {
  const fSp = 200 / 3,
    minLogHz = 1000,
    minLogMel = minLogHz / fSp,
    logStep = Math.log(6.4) / 27;
  return m >= minLogMel ? minLogHz * Math.exp(logStep * (m - minLogMel)) : fSp * m;
}

/**
 * librosa.filters.mel(sr, n_fft, n_mels, fmin, fmax, htk=False, norm='slaney'): triangles between
 * consecutive mel-spaced edges, each scaled by 2 / (upper edge - lower edge) in Hz. Row-major
 * [bands][nFft / 2 + 1], cast to float32 as librosa does.
 */
export function melFilterBank(
  sr = MEL.sampleRate,
  nFft = MEL.nFft,
  bands = MEL.bands,
  fMin = MEL.fMin,
  fMax = MEL.fMax,
): Float32Array {
  const bins = nFft / 2 + 1;
  const lo = hzToMel(fMin),
    hi = hzToMel(fMax);
  const edges = Array.from({ length: bands + 2 }, (_, i) => melToHz(lo + ((hi - lo) * i) / (bands + 1)));
  const w = new Float32Array(bands * bins);
  for (let b = 0; b < bands; b++) {
    const enorm = 2 / (edges[b + 2]! - edges[b]!);
    const d0 = edges[b + 1]! - edges[b]!,
      d1 = edges[b + 2]! - edges[b + 1]!;
    for (let k = 0; k < bins; k++) {
      const f = (k * sr) / nFft;
      const lower = (f - edges[b]!) / d0;
      const upper = (edges[b + 2]! - f) / d1;
      w[b * bins + k] = Math.max(0, Math.min(lower, upper)) * enorm;
    }
  }
  return w;
}

/** Number of frames librosa gives a centred STFT of `n` samples: 1 + floor(n / hop). */
export function frameCount(n: number, hop = MEL.hop): number {
  return 1 + Math.floor(n / hop);
}

/**
 * Power mel spectrogram of 16 kHz samples: frames x 40, row-major (the model's [frames, 40] layout).
 * Reuse one instance per thread: it keeps its FFT plan, window, filter bank and scratch buffers.
 */
export class MelSpectrogram {
  private readonly fft = new Fft(MEL.nFft);
  private readonly window = new Float64Array(MEL.nFft);
  private readonly bank = melFilterBank();
  /** First and last non-zero bin of each band (the triangles are narrow: skip the zeros). */
  private readonly span: Int32Array;
  private readonly re = new Float64Array(MEL.nFft);
  private readonly im = new Float64Array(MEL.nFft);
  private readonly power = new Float64Array(MEL.nFft / 2 + 1);
  private readonly power2 = new Float64Array(MEL.nFft / 2 + 1);

  constructor() {
    // Periodic Hann (scipy get_window('hann', n, fftbins=True)): 0.5 - 0.5 cos(2 pi t / n).
    for (let t = 0; t < MEL.nFft; t++) this.window[t] = 0.5 - 0.5 * Math.cos((2 * Math.PI * t) / MEL.nFft);
    const bins = MEL.nFft / 2 + 1;
    this.span = new Int32Array(MEL.bands * 2);
    for (let b = 0; b < MEL.bands; b++) {
      let first = bins,
        last = -1;
      for (let k = 0; k < bins; k++)
        if (this.bank[b * bins + k] !== 0) {
          first = Math.min(first, k);
          last = k;
        }
      this.span[2 * b] = first;
      this.span[2 * b + 1] = last;
    }
  }

  /** Mel frames of `samples` (16 kHz): Float32Array of frameCount(n) x 40. */
  compute(samples: Float32Array): Float32Array {
    const n = samples.length;
    const nFft = MEL.nFft,
      half = nFft / 2,
      hop = MEL.hop,
      bins = half + 1;
    const frames = frameCount(n);
    const out = new Float32Array(frames * MEL.bands);
    const { re, im, window, power, power2 } = this;
    // Reflect padding by half a window on each side (numpy 'reflect': the edge sample is not repeated).
    const at = (i: number): number => {
      if (n === 1) return samples[0]!;
      let j = i;
      const period = 2 * (n - 1);
      j = ((j % period) + period) % period;
      if (j >= n) j = period - j;
      return samples[j]!;
    };
    const load = (buf: Float64Array, f: number): void => {
      const start = f * hop - half;
      if (start >= 0 && start + nFft <= n) {
        for (let t = 0; t < nFft; t++) buf[t] = samples[start + t]! * window[t]!;
      } else {
        for (let t = 0; t < nFft; t++) buf[t] = at(start + t) * window[t]!;
      }
    };
    // Two real frames per complex FFT: z = a + i b gives A[k] = (Z[k] + conj Z[n-k]) / 2 and
    // B[k] = (Z[k] - conj Z[n-k]) / 2i, half the work of transforming each frame with a zero imaginary part.
    for (let f = 0; f < frames; f += 2) {
      const pair = f + 1 < frames;
      load(re, f);
      if (pair) load(im, f + 1);
      else im.fill(0);
      this.fft.forward(re, im);
      for (let k = 0; k < bins; k++) {
        const j = k === 0 ? 0 : nFft - k;
        const sr = re[k]! + re[j]!,
          di = im[k]! - im[j]!,
          si = im[k]! + im[j]!,
          dr = re[k]! - re[j]!;
        power[k] = (sr * sr + di * di) / 4;
        power2[k] = (si * si + dr * dr) / 4;
      }
      this.bands(power, out, f);
      if (pair) this.bands(power2, out, f + 1);
    }
    return out;
  }

  /** The 40 mel energies of one power spectrum into frame f of out (each band's few non-zero bins only). */
  private bands(power: Float64Array, out: Float32Array, f: number): void {
    const { bank, span } = this,
      bins = MEL.nFft / 2 + 1,
      bands = MEL.bands;
    for (let b = 0; b < bands; b++) {
      let acc = 0;
      const row = b * bins;
      for (let k = span[2 * b]!; k <= span[2 * b + 1]!; k++) acc += bank[row + k]! * power[k]!;
      out[f * bands + b] = acc;
    }
  }
}
