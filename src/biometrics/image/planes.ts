// A raster as the models read it: planar float tensors, grey planes.
import type { RgbImage } from './raster.js';

/**
 * Planar float tensor (1x3xHxW) from an RGB raster: out = (v - mean[c]) / std[c], channel order RGB or BGR.
 * Written into `into` (every one of its 3 * width * height elements) when given, e.g. a lent model input.
 */
export function toPlanar(
  img: RgbImage,
  mean: [number, number, number],
  std: [number, number, number],
  order: 'RGB' | 'BGR' = 'RGB',
  into?: Float32Array,
): Float32Array {
  const n = img.width * img.height;
  const out = into ?? new Float32Array(3 * n);
  const d = img.data;
  const c0 = order === 'RGB' ? 0 : 2,
    c2 = order === 'RGB' ? 2 : 0;
  const i0 = 1 / std[0],
    i1 = 1 / std[1],
    i2 = 1 / std[2];
  for (let p = 0, q = 0; p < n; p++, q += 3) {
    out[p] = (d[q + c0] - mean[0]) * i0;
    out[n + p] = (d[q + 1] - mean[1]) * i1;
    out[2 * n + p] = (d[q + c2] - mean[2]) * i2;
  }
  return out;
}

/** Grey levels (ITU-R BT.601 luma) as a float plane, scaled by `1/div`; into `into` (width * height) when given. */
export function toGreyPlane(img: RgbImage, div: number, into?: Float32Array): Float32Array {
  const n = img.width * img.height;
  const out = into ?? new Float32Array(n);
  const d = img.data;
  const s = 1 / div;
  for (let p = 0, q = 0; p < n; p++, q += 3)
    out[p] = Math.round(0.299 * d[q] + 0.587 * d[q + 1] + 0.114 * d[q + 2]) * s;
  return out;
}

/** Grey levels 0..255 of an RGB raster. */
export function toGrey(img: RgbImage): Float32Array {
  return toGreyPlane(img, 1);
}
