import { scratchF64, scratchI32 } from './scratch.js';
import { warpAffine } from './warp.js';
import type { Affine, RgbImage } from './raster.js';

/** Applies an EXIF orientation (1..8) so the raster is upright. */
export function applyOrientation(img: RgbImage, orientation: number): RgbImage {
  if (orientation <= 1 || orientation > 8) return img;
  const { width: W, height: H, data: src } = img;
  const swap = orientation >= 5;
  const ow = swap ? H : W;
  const oh = swap ? W : H;
  const out = new Uint8Array(ow * oh * 3);
  for (let y = 0; y < oh; y++) {
    for (let x = 0; x < ow; x++) {
      let sx: number, sy: number;
      switch (orientation) {
        case 2:
          sx = W - 1 - x;
          sy = y;
          break;
        case 3:
          sx = W - 1 - x;
          sy = H - 1 - y;
          break;
        case 4:
          sx = x;
          sy = H - 1 - y;
          break;
        case 5:
          sx = y;
          sy = x;
          break;
        case 6:
          sx = y;
          sy = H - 1 - x;
          break;
        case 7:
          sx = W - 1 - y;
          sy = H - 1 - x;
          break;
        default:
          sx = W - 1 - y;
          sy = x;
          break; // 8
      }
      const s = (sy * W + sx) * 3;
      const d = (y * ow + x) * 3;
      out[d] = src[s];
      out[d + 1] = src[s + 1];
      out[d + 2] = src[s + 2];
    }
  }
  return { width: ow, height: oh, data: out };
}

/**
 * Resizes the whole image to `ow` x `oh` by area averaging (exact box filter for downscaling, bilinear
 * for upscaling). Used for the detector input, where a plain bilinear sample would alias badly on large
 * photos. `out` (ow * oh * 3 bytes) receives the pixels when given, e.g. a scratch raster read at once.
 */
export function resizeArea(img: RgbImage, ow: number, oh: number, out?: Uint8Array): RgbImage {
  const { width: W, height: H, data: src } = img;
  const sx = W / ow;
  const sy = H / oh;
  if (sx <= 1 && sy <= 1) return warpAffine(img, [sx, 0, (sx - 1) / 2, 0, sy, (sy - 1) / 2], ow, oh, undefined, out);
  const dst = out ? out.subarray(0, ow * oh * 3) : new Uint8Array(ow * oh * 3);
  // Precompute the column spans and weights once (reused arrays: no garbage per image).
  const x0s = scratchI32('area x0', ow),
    x1s = scratchI32('area x1', ow);
  for (let x = 0; x < ow; x++) {
    x0s[x] = Math.floor(x * sx);
    x1s[x] = Math.max(x0s[x]! + 1, Math.min(W, Math.floor((x + 1) * sx)));
  }
  const acc = scratchF64('area sums', ow * 3);
  for (let y = 0; y < oh; y++) {
    const y0 = Math.floor(y * sy);
    const y1 = Math.max(y0 + 1, Math.min(H, Math.floor((y + 1) * sy)));
    acc.fill(0, 0, ow * 3);
    for (let yy = y0; yy < y1; yy++) {
      const row = yy * W * 3;
      for (let x = 0; x < ow; x++) {
        let r = 0,
          g = 0,
          b = 0;
        for (let xx = x0s[x]!, p = row + xx * 3; xx < x1s[x]!; xx++, p += 3) {
          r += src[p]!;
          g += src[p + 1]!;
          b += src[p + 2]!;
        }
        acc[x * 3] += r;
        acc[x * 3 + 1] += g;
        acc[x * 3 + 2] += b;
      }
    }
    const rows = y1 - y0;
    for (let x = 0; x < ow; x++) {
      const n = rows * (x1s[x]! - x0s[x]!);
      const d = (y * ow + x) * 3;
      dst[d] = Math.round(acc[x * 3]! / n);
      dst[d + 1] = Math.round(acc[x * 3 + 1]! / n);
      dst[d + 2] = Math.round(acc[x * 3 + 2]! / n);
    }
  }
  return { width: ow, height: oh, data: dst };
}

/** Affine map cropping the source rectangle (x, y, w, h) into an `ow` x `oh` raster. */
export function cropMap(x: number, y: number, w: number, h: number, ow: number, oh: number): Affine {
  const sx = w / ow,
    sy = h / oh;
  return [sx, 0, x + (sx - 1) / 2, 0, sy, y + (sy - 1) / 2];
}

/** Crops and resizes a source rectangle (may extend past the edges), into `out` (ow * oh * 3 bytes) when given. */
export function cropResize(
  img: RgbImage,
  x: number,
  y: number,
  w: number,
  h: number,
  ow: number,
  oh: number,
  out?: Uint8Array,
): RgbImage {
  return warpAffine(img, cropMap(x, y, w, h, ow, oh), ow, oh, undefined, out);
}
