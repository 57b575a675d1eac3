// The crop path (axis-aligned warp) now filters into a reused scratch array and may write into a raster the
// caller gives. Its bytes feed the landmark, pose, eye, liveness and age models, whose outputs the stored
// templates and checks were measured with: they must not move by a single byte, and no crop may see what a
// previous one left in the scratch. The previous implementation is kept here, verbatim, as the reference.
import { readdirSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { decodeImage } from './decode.js';
import { cropMap, cropResize } from './image.js';
import { type Affine, type RgbImage } from './raster.js';

interface AxisFilter {
  first: Int32Array;
  taps: number;
  weights: Float64Array;
}

function axisFilter(n: number, offs: Float64Array, scale: number, shift: number, max: number): AxisFilter {
  const k = offs.length;
  const first = new Int32Array(n);
  const at = (t: number, i: number) => {
    const c = scale * (t + offs[i]!) + shift;
    return c < 0 ? 0 : c > max ? max : c;
  };
  let taps = 1;
  for (let t = 0; t < n; t++) {
    first[t] = at(t, 0) | 0;
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
  return { first, taps, weights };
}

/** The crop path as it was before (commit f40b5d0), the k x k sub-sampling set up as warpAffine does. */
function previousCrop(img: RgbImage, m: Affine, ow: number, oh: number): Uint8Array {
  const scale = Math.max(Math.hypot(m[0], m[3]), Math.hypot(m[1], m[4]));
  const k = scale > 1.5 ? Math.min(4, Math.ceil(scale)) : 1;
  const offs = new Float64Array(k);
  for (let i = 0; i < k; i++) offs[i] = (i + 0.5) / k - 0.5;
  const { width: W, height: H, data: src } = img;
  const out = new Uint8Array(ow * oh * 3);
  const inv = 1 / (k * k);
  const { first: cx, taps: tx, weights: wx } = axisFilter(ow, offs, m[0], m[2], W - 1);
  const { first: ry, taps: ty, weights: wy } = axisFilter(oh, offs, m[4], m[5], H - 1);
  let r0 = H,
    r1 = -1;
  for (let v = 0; v < oh; v++) {
    r0 = Math.min(r0, ry[v]!);
    r1 = Math.max(r1, Math.min(H - 1, ry[v]! + ty - 1));
  }
  const across = new Float64Array((r1 - r0 + 1) * ow * 3);
  for (let row = r0, q = 0; row <= r1; row++) {
    const line = row * W * 3;
    for (let u = 0; u < ow; u++, q += 3) {
      let r = 0,
        g = 0,
        b = 0;
      for (let a = 0, wb = u * tx, p = line + cx[u]! * 3; a < tx; a++, p += 3) {
        const w = wx[wb + a]!;
        if (w === 0) continue;
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
      for (let a = 0, wb = v * ty, q = base + u * 3; a < ty; a++, q += ow * 3) {
        const w = wy[wb + a]!;
        if (w === 0) continue;
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
  return out;
}

const LABELLED = new URL('../../../test/fixtures/photos/labelled/', import.meta.url);
const photos = readdirSync(LABELLED, { recursive: true, encoding: 'utf8' })
  .filter((f) => /\.jpe?g$/i.test(f))
  .sort();

it('crops real photos byte for byte as the previous crop path did, at every size the models take', async () => {
  expect(photos.length).toBeGreaterThan(20);
  let s = 7;
  const rand = () => ((s = (s * 1103515245 + 12345) >>> 0) >>> 8) / 2 ** 24;
  let crops = 0;
  for (const file of photos) {
    const img = await decodeImage(new Uint8Array(readFileSync(new URL(file, LABELLED))));
    // Sizes of the landmark, eye, pose, liveness and age inputs, and the token picture's; boxes inside the
    // photo and reaching past its edges (the edge rule), shrinking 1-6x and enlarging. Each size is cut twice
    // in a row from different boxes, so a reused scratch array holding the previous crop's rows would show.
    for (const [ow, oh] of [
      [64, 64],
      [24, 24],
      [224, 224],
      [128, 128],
      [64, 64],
      [240, 320],
    ] as const)
      for (let twice = 0; twice < 2; twice++) {
        const side = Math.min(img.width, img.height) * (0.05 + rand() * 0.9);
        const x = (img.width - side) * (rand() * 1.2 - 0.1),
          y = (img.height - side) * (rand() * 1.2 - 0.1);
        const m = cropMap(x, y, side, side * (oh / ow), ow, oh);
        const got = cropResize(img, x, y, side, side * (oh / ow), ow, oh).data;
        expect(Buffer.from(got).equals(Buffer.from(previousCrop(img, m, ow, oh))), `${file} ${ow}x${oh}`).toBe(true);
        crops++;
      }
  }
  expect(crops).toBe(photos.length * 12);
});
