/**
 * Mixed-radix complex FFT (decimation in time) for any size whose prime factors are small, e.g.
 * 400 = 4 * 4 * 5 * 5 (the speaker encoder's n_fft). A power-of-two FFT would need zero-padding to 512,
 * which changes the spectrum; this computes exactly the 400-point DFT librosa computes.
 *
 * Planned once per size: the input permutation (digit reversal over the mixed radices) and every stage's
 * twiddle factors are tables, so a transform is one gather and a few passes of butterflies with no recursion,
 * modulo or trigonometry. Radix 2, 4 and 5 butterflies are written out (5 by the symmetric formulation:
 * 12 real multiplications instead of 25 complex ones); other factors (3, 7, ...) use a generic butterfly.
 * Not thread-safe: one instance per caller (it keeps scratch buffers).
 *
 * @example
 * const fft = new Fft(400);
 * fft.forward(re, im); // in place
 */
interface Stage {
  /** Radix of the butterflies and size of the sub-transforms they combine. */
  p: number;
  m: number;
  /** W_{p m}^{q k} for k < m, 1 <= q < p, at [k * (p - 1) + q - 1]. */
  twRe: Float64Array;
  twIm: Float64Array;
  /** W_p^j for j < p (the generic butterfly's roots). */
  rootRe: Float64Array;
  rootIm: Float64Array;
}

const C5_1 = Math.cos((2 * Math.PI) / 5),
  C5_2 = Math.cos((4 * Math.PI) / 5);
const S5_1 = Math.sin((2 * Math.PI) / 5),
  S5_2 = Math.sin((4 * Math.PI) / 5);

export class Fft {
  private readonly perm: Int32Array;
  private readonly stages: Stage[] = [];
  private readonly inRe: Float64Array;
  private readonly inIm: Float64Array;
  private readonly tRe: Float64Array;
  private readonly tIm: Float64Array;

  constructor(readonly n: number) {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`FFT size must be a positive integer, got ${n}`);
    const factors: number[] = [];
    let rest = n;
    for (const f of [4, 2, 3, 5, 7])
      while (rest % f === 0) {
        factors.push(f);
        rest /= f;
      }
    for (let f = 11; rest > 1; f += 2)
      while (rest % f === 0) {
        factors.push(f);
        rest /= f;
      }
    // Output slot of each input sample after the recursive splits: sub-transform q of a split by p takes
    // the samples q, q + p, q + 2p, ... and lands in the q-th block of the output.
    this.perm = new Int32Array(n);
    const place = (size: number, stride: number, inOff: number, outOff: number, level: number): void => {
      if (size === 1) {
        this.perm[outOff] = inOff;
        return;
      }
      const p = factors[level]!,
        m = size / p;
      for (let q = 0; q < p; q++) place(m, stride * p, inOff + q * stride, outOff + q * m, level + 1);
    };
    place(n, 1, 0, 0, 0);
    // Stages from the innermost split (smallest sub-transforms) outwards.
    let m = 1;
    for (let level = factors.length - 1; level >= 0; level--) {
      const p = factors[level]!,
        span = p * m;
      const twRe = new Float64Array(m * (p - 1)),
        twIm = new Float64Array(m * (p - 1));
      for (let k = 0; k < m; k++)
        for (let q = 1; q < p; q++) {
          const a = (-2 * Math.PI * ((q * k) % span)) / span; // forward transform: e^{-2 pi i q k / span}
          twRe[k * (p - 1) + q - 1] = Math.cos(a);
          twIm[k * (p - 1) + q - 1] = Math.sin(a);
        }
      const rootRe = Float64Array.from({ length: p }, (_, j) => Math.cos((-2 * Math.PI * j) / p));
      const rootIm = Float64Array.from({ length: p }, (_, j) => Math.sin((-2 * Math.PI * j) / p));
      this.stages.push({ p, m, twRe, twIm, rootRe, rootIm });
      m = span;
    }
    this.inRe = new Float64Array(n);
    this.inIm = new Float64Array(n);
    const maxP = Math.max(...factors, 1);
    this.tRe = new Float64Array(maxP);
    this.tIm = new Float64Array(maxP);
  }

  /** In-place forward DFT: X[k] = sum_t x[t] e^{-2 pi i k t / n}. */
  forward(re: Float64Array, im: Float64Array): void {
    const n = this.n,
      perm = this.perm,
      inRe = this.inRe,
      inIm = this.inIm;
    inRe.set(re.subarray(0, n));
    inIm.set(im.subarray(0, n));
    for (let i = 0; i < n; i++) {
      const j = perm[i]!;
      re[i] = inRe[j]!;
      im[i] = inIm[j]!;
    }
    for (const s of this.stages) {
      const span = s.p * s.m;
      for (let off = 0; off < n; off += span) {
        if (s.p === 4) radix4(re, im, off, s);
        else if (s.p === 5) radix5(re, im, off, s);
        else if (s.p === 2) radix2(re, im, off, s);
        else this.generic(re, im, off, s);
      }
    }
  }

  /** X[k + r m] = sum_q W^{q k} Y_q[k] W_p^{q r}, the p outputs overwriting the p inputs. */
  private generic(re: Float64Array, im: Float64Array, off: number, { p, m, twRe, twIm, rootRe, rootIm }: Stage): void {
    const tRe = this.tRe,
      tIm = this.tIm;
    for (let k = 0; k < m; k++) {
      tRe[0] = re[off + k]!;
      tIm[0] = im[off + k]!;
      for (let q = 1; q < p; q++) {
        const i = off + q * m + k,
          w = k * (p - 1) + q - 1;
        tRe[q] = re[i]! * twRe[w]! - im[i]! * twIm[w]!;
        tIm[q] = re[i]! * twIm[w]! + im[i]! * twRe[w]!;
      }
      for (let r = 0; r < p; r++) {
        let sr = 0,
          si = 0;
        for (let q = 0; q < p; q++) {
          const j = (q * r) % p;
          sr += tRe[q]! * rootRe[j]! - tIm[q]! * rootIm[j]!;
          si += tRe[q]! * rootIm[j]! + tIm[q]! * rootRe[j]!;
        }
        re[off + r * m + k] = sr;
        im[off + r * m + k] = si;
      }
    }
  }
}

function radix2(re: Float64Array, im: Float64Array, off: number, { m, twRe, twIm }: Stage): void {
  for (let k = 0; k < m; k++) {
    const a = off + k,
      b = a + m;
    const br = re[b]! * twRe[k]! - im[b]! * twIm[k]!,
      bi = re[b]! * twIm[k]! + im[b]! * twRe[k]!;
    const ar = re[a]!,
      ai = im[a]!;
    re[a] = ar + br;
    im[a] = ai + bi;
    re[b] = ar - br;
    im[b] = ai - bi;
  }
}

function radix4(re: Float64Array, im: Float64Array, off: number, { m, twRe, twIm }: Stage): void {
  for (let k = 0; k < m; k++) {
    const i0 = off + k,
      i1 = i0 + m,
      i2 = i1 + m,
      i3 = i2 + m,
      w = 3 * k;
    const x0r = re[i0]!,
      x0i = im[i0]!;
    const x1r = re[i1]! * twRe[w]! - im[i1]! * twIm[w]!,
      x1i = re[i1]! * twIm[w]! + im[i1]! * twRe[w]!;
    const x2r = re[i2]! * twRe[w + 1]! - im[i2]! * twIm[w + 1]!,
      x2i = re[i2]! * twIm[w + 1]! + im[i2]! * twRe[w + 1]!;
    const x3r = re[i3]! * twRe[w + 2]! - im[i3]! * twIm[w + 2]!,
      x3i = re[i3]! * twIm[w + 2]! + im[i3]! * twRe[w + 2]!;
    const ar = x0r + x2r,
      ai = x0i + x2i,
      br = x0r - x2r,
      bi = x0i - x2i;
    const cr = x1r + x3r,
      ci = x1i + x3i,
      dr = x1r - x3r,
      di = x1i - x3i;
    re[i0] = ar + cr;
    im[i0] = ai + ci;
    re[i2] = ar - cr;
    im[i2] = ai - ci;
    // Forward transform: multiply (x1 - x3) by -i for output 1, by +i for output 3.
    re[i1] = br + di;
    im[i1] = bi - dr;
    re[i3] = br - di;
    im[i3] = bi + dr;
  }
}

function radix5(re: Float64Array, im: Float64Array, off: number, { m, twRe, twIm }: Stage): void {
  for (let k = 0; k < m; k++) {
    const i0 = off + k,
      i1 = i0 + m,
      i2 = i1 + m,
      i3 = i2 + m,
      i4 = i3 + m,
      w = 4 * k;
    const x0r = re[i0]!,
      x0i = im[i0]!;
    const x1r = re[i1]! * twRe[w]! - im[i1]! * twIm[w]!,
      x1i = re[i1]! * twIm[w]! + im[i1]! * twRe[w]!;
    const x2r = re[i2]! * twRe[w + 1]! - im[i2]! * twIm[w + 1]!,
      x2i = re[i2]! * twIm[w + 1]! + im[i2]! * twRe[w + 1]!;
    const x3r = re[i3]! * twRe[w + 2]! - im[i3]! * twIm[w + 2]!,
      x3i = re[i3]! * twIm[w + 2]! + im[i3]! * twRe[w + 2]!;
    const x4r = re[i4]! * twRe[w + 3]! - im[i4]! * twIm[w + 3]!,
      x4i = re[i4]! * twIm[w + 3]! + im[i4]! * twRe[w + 3]!;
    // Pairs q and 5 - q share cosines and have opposite sines.
    const a1r = x1r + x4r,
      a1i = x1i + x4i,
      b1r = x1r - x4r,
      b1i = x1i - x4i;
    const a2r = x2r + x3r,
      a2i = x2i + x3i,
      b2r = x2r - x3r,
      b2i = x2i - x3i;
    const t1r = x0r + C5_1 * a1r + C5_2 * a2r,
      t1i = x0i + C5_1 * a1i + C5_2 * a2i;
    const t2r = x0r + C5_2 * a1r + C5_1 * a2r,
      t2i = x0i + C5_2 * a1i + C5_1 * a2i;
    const u1r = S5_1 * b1r + S5_2 * b2r,
      u1i = S5_1 * b1i + S5_2 * b2i;
    const u2r = S5_2 * b1r - S5_1 * b2r,
      u2i = S5_2 * b1i - S5_1 * b2i;
    re[i0] = x0r + a1r + a2r;
    im[i0] = x0i + a1i + a2i;
    // X1 = t1 - i u1, X4 = t1 + i u1; X2 = t2 - i u2, X3 = t2 + i u2.
    re[i1] = t1r + u1i;
    im[i1] = t1i - u1r;
    re[i4] = t1r - u1i;
    im[i4] = t1i + u1r;
    re[i2] = t2r + u2i;
    im[i2] = t2i - u2r;
    re[i3] = t2r - u2i;
    im[i3] = t2i + u2r;
  }
}
