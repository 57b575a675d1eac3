import { encode as encodePngRaw } from 'fast-png';
import type { RgbImage } from './image.js';

/** Encodes an RGB raster as PNG bytes (pure JS, runs on every runtime). */
export function encodePng(img: RgbImage): Uint8Array {
  return encodePngRaw({ width: img.width, height: img.height, data: img.data, channels: 3, depth: 8 });
}
