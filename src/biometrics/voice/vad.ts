/**
 * Energy voice activity detection, shaped like Resemblyzer's trim_long_silences (which uses WebRTC's VAD):
 * 30 ms windows are flagged as voiced, the flags are smoothed with a moving average over 8 windows and
 * rounded, then dilated by 3 windows on each side (a 7-window structuring element) so that short pauses inside speech are kept.
 *
 * Flagging by energy relative to the recording's own noise floor: a window is voiced when its energy is
 * at least marginDb (6 dB) above the floor (the 10th percentile of window energies) and above an absolute
 * absFloorDb (digital silence and hiss are never speech). The design notes (biometrics.md) measured that
 * an energy VAD trims as well as a neural VAD before this encoder; it needs no model, runs the same on every
 * runtime and costs well under a millisecond per second of audio.
 */
const VAD = Object.freeze({ windowMs: 30, smoothing: 8, dilation: 3, marginDb: 6, absFloorDb: -55 });

/** What the VAD found. */
export interface VadResult {
  /** Window length in samples. */
  window: number;
  /** One flag per window after smoothing and dilation (1 = kept as speech). */
  mask: Uint8Array;
  /** Energy of each window in dBFS (mean square, 0 dB = full-scale square wave). */
  energyDb: Float32Array;
  /** Noise floor estimate in dBFS (10th percentile of window energies). */
  floorDb: number;
}

const EPS = 1e-12;

/** Runs the VAD over mono samples at `rate`. */
export function detectVoice(samples: Float32Array, rate: number): VadResult {
  const window = Math.round((rate * VAD.windowMs) / 1000);
  const count = Math.floor(samples.length / window);
  const energyDb = new Float32Array(count);
  for (let w = 0; w < count; w++) {
    let e = 0;
    for (let i = w * window, end = i + window; i < end; i++) e += samples[i]! * samples[i]!;
    energyDb[w] = 10 * Math.log10(e / window + EPS);
  }
  const floorDb = count ? percentile(energyDb, 0.1) : -120;
  const threshold = Math.max(floorDb + VAD.marginDb, VAD.absFloorDb);
  const flags = new Float64Array(count);
  for (let w = 0; w < count; w++) flags[w] = energyDb[w]! > threshold ? 1 : 0;
  // Moving average over `smoothing` windows (numpy-style 'valid' convolution padded with zeros, as Resemblyzer).
  const smooth = new Uint8Array(count);
  const k = VAD.smoothing;
  for (let w = 0; w < count; w++) {
    let s = 0;
    for (let j = w - ((k - 1) >> 1); j < w - ((k - 1) >> 1) + k; j++) if (j >= 0 && j < count) s += flags[j]!;
    smooth[w] = s / k > 0.5 ? 1 : 0;
  }
  const mask = new Uint8Array(count);
  for (let w = 0; w < count; w++) {
    if (!smooth[w]) continue;
    for (let j = Math.max(0, w - VAD.dilation); j <= Math.min(count - 1, w + VAD.dilation); j++) mask[j] = 1;
  }
  return { window, mask, energyDb, floorDb };
}

/** The samples of the windows the mask keeps, concatenated. */
export function keepVoiced(samples: Float32Array, vad: VadResult): Float32Array {
  let kept = 0;
  for (const m of vad.mask) kept += m;
  const out = new Float32Array(kept * vad.window);
  let o = 0;
  for (let w = 0; w < vad.mask.length; w++) {
    if (!vad.mask[w]) continue;
    out.set(samples.subarray(w * vad.window, (w + 1) * vad.window), o);
    o += vad.window;
  }
  return out;
}

function percentile(values: Float32Array, q: number): number {
  const sorted = Float32Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(q * (sorted.length - 1)))]!;
}
