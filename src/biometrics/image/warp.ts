// Sampling a raster through an affine map: the general bilinear warp with supersampling, and the faster
// separable path of axis-aligned maps (crops and resizes).
import type { Affine, RgbImage } from './raster.js';
import { scratchF64 } from './scratch.js';

/**
 * Samples `img` through the affine map `m` into an `ow` x `oh` raster, bilinear, with k x k supersampling
 * when the map shrinks by more than 1.5x (so a 600-pixel face cropped to 64 pixels does not alias).
 * Pixels falling outside the source take the nearest edge pixel, or the colour `fill` when given: a picture
 * for people (the token image) is padded with a flat colour, since repeating the edge pixel smears it into
 * streaks; the crops fed to the models keep the edge rule they were measured with. `out` (ow * oh * 3 bytes)
 * receives the pixels when given (a scratch raster the caller reads at once), else a new array does.
 */
export function warpAffine(
  img: RgbImage,
  m: Affine,
  ow: number,
  oh: number,
  fill?: readonly [number, number, number],
  out?: Uint8Array,
): RgbImage {
  const scale = Math.max(Math.hypot(m[0], m[3]), Math.hypot(m[1], m[4]));
  const k = scale > 1.5 ? Math.min(4, Math.ceil(scale)) : 1;
  // Sub-sample offsets within a destination pixel (the same for every pixel).
  const offs = new Float64Array(k);
  for (let i = 0; i < k; i++) offs[i] = (i + 0.5) / k - 0.5;
  const dst = out ? out.subarray(0, ow * oh * 3) : new Uint8Array(ow * oh * 3);
  if (!fill && m[1] === 0 && m[3] === 0 && m[0] > 0 && m[4] > 0) return warpAxisAligned(img, m, ow, oh, k, offs, dst);
  const { width: W, height: H, data: src } = img;
  const inv = 1 / (k * k);
  const maxX = W - 1,
    maxY = H - 1;
  const [m0, m1, m2, m3, m4, m5] = m;
  // A sub-sample is outside when it falls beyond the outer half of the border pixels (pixel centres are integers).
  const padded = fill !== undefined;
  const [fr, fg, fb] = fill ?? [0, 0, 0];
  let d = 0;
  for (let v = 0; v < oh; v++) {
    for (let u = 0; u < ow; u++) {
      let r = 0,
        g = 0,
        b = 0;
      for (let j = 0; j < k; j++) {
        const vv = v + offs[j];
        const bx = m1 * vv,
          by = m4 * vv;
        for (let i = 0; i < k; i++) {
          const uu = u + offs[i];
          let x = m0 * uu + bx + m2; // same association as m0*u + m1*v + m2
          let y = m3 * uu + by + m5;
          if (padded && (x < -0.5 || y < -0.5 || x > maxX + 0.5 || y > maxY + 0.5)) {
            r += fr;
            g += fg;
            b += fb;
            continue;
          }
          x = x < 0 ? 0 : x > maxX ? maxX : x;
          y = y < 0 ? 0 : y > maxY ? maxY : y;
          const x0 = x | 0,
            y0 = y | 0; // x, y >= 0: truncation is floor
          const dx = x0 < maxX ? 3 : 0,
            dy = y0 < maxY ? W * 3 : 0;
          const fx = x - x0,
            fy = y - y0;
          const p00 = (y0 * W + x0) * 3,
            p01 = p00 + dx,
            p10 = p00 + dy,
            p11 = p10 + dx;
          const w00 = (1 - fx) * (1 - fy),
            w01 = fx * (1 - fy),
            w10 = (1 - fx) * fy,
            w11 = fx * fy;
          r += src[p00] * w00 + src[p01] * w01 + src[p10] * w10 + src[p11] * w11;
          g += src[p00 + 1] * w00 + src[p01 + 1] * w01 + src[p10 + 1] * w10 + src[p11 + 1] * w11;
          b += src[p00 + 2] * w00 + src[p01 + 2] * w01 + src[p10 + 2] * w10 + src[p11 + 2] * w11;
        }
      }
      // Values are >= 0, so (v + 0.5) | 0 equals Math.round(v).
      dst[d] = (r * inv + 0.5) | 0;
      dst[d + 1] = (g * inv + 0.5) | 0;
      dst[d + 2] = (b * inv + 0.5) | 0;
      d += 3;
    }
  }
  return { width: ow, height: oh, data: dst };
}

/**
 * The filter of one axis of a crop: destination index t takes the source indices first[t] .. first[t]+taps-1
 * with these weights, the sum over its k sub-samples of their two bilinear weights (clamped at the edges).
 */
interface AxisFilter {
  first: Int32Array;
  taps: number;
  weights: Float64Array;
  /** Per destination index, how many of its taps matter: the rest weigh 0 (the window past the far edge). */
  used: Int32Array;
}

/** Sub-sample positions `scale * (t + offs[i]) + shift`, clamped to 0..max, folded into per-index weights. */
function axisFilter(n: number, offs: Float64Array, scale: number, shift: number, max: number): AxisFilter {
  const k = offs.length;
  const first = new Int32Array(n);
  const at = (t: number, i: number) => {
    const c = scale * (t + offs[i]!) + shift;
    return c < 0 ? 0 : c > max ? max : c;
  };
  let taps = 1;
  for (let t = 0; t < n; t++) {
    first[t] = at(t, 0) | 0; // positions grow with i (scale > 0): the first sub-sample is the leftmost
    const last = at(t, k - 1) | 0;
    taps = Math.max(taps, last - first[t]! + (last < max ? 2 : 1));
  }
  const weights = new Float64Array(n * taps);
  for (let t = 0; t < n; t++) {
    for (let i = 0; i < k; i++) {
      const c = at(t, i);
      const c0 = c | 0,
        f = c - c0;
      const o = t * taps + c0 - first[t]!;
      weights[o] += 1 - f;
      weights[c0 < max ? o + 1 : o] += f;
    }
  }
  const used = new Int32Array(n);
  for (let t = 0; t < n; t++) {
    let u = taps;
    while (u > 1 && weights[t * taps + u - 1] === 0) u--;
    used[t] = u;
  }
  return { first, taps, weights, used };
}

/**
 * `warpAffine` for maps without rotation (crops). The k x k bilinear sub-samples of a destination pixel add
 * up to a separable weighted sum over a small window of source pixels: filter the rows once across, then the
 * columns down, instead of weighting four pixels per sub-sample (a third of the arithmetic at k = 4, and
 * crops were most of the pipeline's own work). The same sum in another order: a byte may differ by one where
 * a value falls within rounding of .5 (a test bounds it against the plain rule). The rows filtered across live
 * in a reused scratch array (2 MB for the pose crop of a 512-pixel portrait, once per face).
 */
function warpAxisAligned(
  img: RgbImage,
  m: Affine,
  ow: number,
  oh: number,
  k: number,
  offs: Float64Array,
  out: Uint8Array,
): RgbImage {
  const { width: W, height: H, data: src } = img;
  const inv = 1 / (k * k);
  const cols = axisFilter(ow, offs, m[0], m[2], W - 1);
  const rows = axisFilter(oh, offs, m[4], m[5], H - 1);
  const { first: cx, taps: tx, weights: wx, used: ux } = cols;
  const { first: ry, taps: ty, weights: wy, used: uy } = rows;
  // Every source row some destination row reads, filtered across once.
  let r0 = H,
    r1 = -1;
  for (let v = 0; v < oh; v++) {
    r0 = Math.min(r0, ry[v]!);
    r1 = Math.max(r1, Math.min(H - 1, ry[v]! + ty - 1));
  }
  const across = scratchF64('warp across', (r1 - r0 + 1) * ow * 3); // every element written below before it is read
  for (let row = r0, q = 0; row <= r1; row++) {
    const line = row * W * 3;
    for (let u = 0; u < ow; u++, q += 3) {
      let r = 0,
        g = 0,
        b = 0;
      // Only the taps that weigh anything: the window's end past the right edge is never read. A zero weight
      // within them adds an exact 0, so the sums are the same as when such taps were skipped.
      for (let a = 0, wb = u * tx, p = line + cx[u]! * 3, end = ux[u]!; a < end; a++, p += 3) {
        const w = wx[wb + a]!;
        r += src[p]! * w;
        g += src[p + 1]! * w;
        b += src[p + 2]! * w;
      }
      across[q] = r;
      across[q + 1] = g;
      across[q + 2] = b;
    }
  }
  let d = 0;
  for (let v = 0; v < oh; v++) {
    const base = (ry[v]! - r0) * ow * 3;
    for (let u = 0; u < ow; u++) {
      let r = 0,
        g = 0,
        b = 0;
      for (let a = 0, wb = v * ty, q = base + u * 3, end = uy[v]!; a < end; a++, q += ow * 3) {
        const w = wy[wb + a]!;
        r += across[q]! * w;
        g += across[q + 1]! * w;
        b += across[q + 2]! * w;
      }
      out[d] = (r * inv + 0.5) | 0;
      out[d + 1] = (g * inv + 0.5) | 0;
      out[d + 2] = (b * inv + 0.5) | 0;
      d += 3;
    }
  }
  return { width: ow, height: oh, data: out };
}
