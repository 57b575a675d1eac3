/**
 * Mixed-radix complex FFT (recursive decimation in time) for any size whose prime factors are small, e.g.
 * 400 = 4 * 4 * 5 * 5 (the speaker encoder's n_fft). A power-of-two FFT would need zero-padding to 512,
 * which changes the spectrum; this computes exactly the 400-point DFT librosa computes.
 *
 * Radix-4 and radix-2 butterflies are written out; other factors (5, 3, ...) use a generic butterfly with
 * precomputed roots. Twiddles come from one table of N roots of unity. Not thread-safe: one instance per
 * caller (it keeps scratch buffers).
 *
 * @example
 * const fft = new Fft(400);
 * fft.forward(re, im); // in place
 */
export class Fft {
  private readonly factors: number[] = [];
  private readonly cos: Float64Array;
  private readonly sin: Float64Array;
  private readonly inRe: Float64Array;
  private readonly inIm: Float64Array;
  private readonly tRe: Float64Array;
  private readonly tIm: Float64Array;

  constructor(readonly n: number) {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`FFT size must be a positive integer, got ${n}`);
    let m = n;
    for (const f of [4, 2, 3, 5, 7]) while (m % f === 0) { this.factors.push(f); m /= f; }
    for (let f = 11; m > 1; f += 2) while (m % f === 0) { this.factors.push(f); m /= f; }
    this.cos = new Float64Array(n);
    this.sin = new Float64Array(n);
    for (let k = 0; k < n; k++) {
      this.cos[k] = Math.cos((2 * Math.PI * k) / n);
      this.sin[k] = -Math.sin((2 * Math.PI * k) / n); // forward transform: e^{-2 pi i k / n}
    }
    this.inRe = new Float64Array(n);
    this.inIm = new Float64Array(n);
    const maxP = Math.max(...this.factors, 1);
    this.tRe = new Float64Array(maxP);
    this.tIm = new Float64Array(maxP);
  }

  /** In-place forward DFT: X[k] = sum_t x[t] e^{-2 pi i k t / n}. */
  forward(re: Float64Array, im: Float64Array): void {
    this.inRe.set(re.subarray(0, this.n));
    this.inIm.set(im.subarray(0, this.n));
    this.rec(this.n, 1, 0, re, im, 0, 0);
  }

  private rec(n: number, stride: number, inOff: number, re: Float64Array, im: Float64Array, outOff: number, level: number): void {
    if (n === 1) {
      re[outOff] = this.inRe[inOff]!;
      im[outOff] = this.inIm[inOff]!;
      return;
    }
    const p = this.factors[level]!;
    const m = n / p;
    for (let q = 0; q < p; q++) this.rec(m, stride * p, inOff + q * stride, re, im, outOff + q * m, level + 1);
    const N = this.n, c = this.cos, s = this.sin;
    // Combine: X[k + r m] = sum_q W_n^{q k} Y_q[k] W_p^{q r}, for k < m, r < p (in place over the p outputs).
    if (p === 2) {
      for (let k = 0; k < m; k++) {
        const a = outOff + k, b = a + m;
        const w = k * stride;
        const br = re[b]! * c[w]! - im[b]! * s[w]!, bi = re[b]! * s[w]! + im[b]! * c[w]!;
        const ar = re[a]!, ai = im[a]!;
        re[a] = ar + br; im[a] = ai + bi;
        re[b] = ar - br; im[b] = ai - bi;
      }
      return;
    }
    if (p === 4) {
      for (let k = 0; k < m; k++) {
        const i0 = outOff + k, i1 = i0 + m, i2 = i1 + m, i3 = i2 + m;
        const w1 = k * stride, w2 = (2 * w1) % N, w3 = (3 * w1) % N;
        const x0r = re[i0]!, x0i = im[i0]!;
        const x1r = re[i1]! * c[w1]! - im[i1]! * s[w1]!, x1i = re[i1]! * s[w1]! + im[i1]! * c[w1]!;
        const x2r = re[i2]! * c[w2]! - im[i2]! * s[w2]!, x2i = re[i2]! * s[w2]! + im[i2]! * c[w2]!;
        const x3r = re[i3]! * c[w3]! - im[i3]! * s[w3]!, x3i = re[i3]! * s[w3]! + im[i3]! * c[w3]!;
        const ar = x0r + x2r, ai = x0i + x2i, br = x0r - x2r, bi = x0i - x2i;
        const cr = x1r + x3r, ci = x1i + x3i, dr = x1r - x3r, di = x1i - x3i;
        re[i0] = ar + cr; im[i0] = ai + ci;
        re[i2] = ar - cr; im[i2] = ai - ci;
        // Forward transform: multiply (x1 - x3) by -i for output 1, by +i for output 3.
        re[i1] = br + di; im[i1] = bi - dr;
        re[i3] = br - di; im[i3] = bi + dr;
      }
      return;
    }
    const tRe = this.tRe, tIm = this.tIm;
    const rootStep = N / p; // W_p^{1} = W_N^{N/p}
    for (let k = 0; k < m; k++) {
      for (let q = 0; q < p; q++) {
        const i = outOff + q * m + k;
        const w = (q * k * stride) % N;
        tRe[q] = re[i]! * c[w]! - im[i]! * s[w]!;
        tIm[q] = re[i]! * s[w]! + im[i]! * c[w]!;
      }
      for (let r = 0; r < p; r++) {
        let sr = 0, si = 0;
        for (let q = 0; q < p; q++) {
          const w = ((q * r) % p) * rootStep;
          sr += tRe[q]! * c[w]! - tIm[q]! * s[w]!;
          si += tRe[q]! * s[w]! + tIm[q]! * c[w]!;
        }
        re[outOff + r * m + k] = sr;
        im[outOff + r * m + k] = si;
      }
    }
  }
}
