import { zlibSync } from 'fflate';
import { concatBytes } from '../bytes.js';
import { crc32 } from '../crc32.js';
import type { RgbImage } from './raster.js';

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** One PNG chunk: length, type, data, CRC of type and data. */
function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/**
 * Encodes an RGB raster as an 8-bit truecolour PNG (pure JS, runs on every runtime).
 *
 * Every row but the first uses PNG's Up filter (the difference from the row above), which makes the token
 * images of faces about a third smaller than unfiltered rows (187 KB to 127 KB for a 240x320 token), and
 * deflate level 1: higher levels cost a third more time here for 2% less. (fast-png, used before, wrote
 * unfiltered rows at level 3: bigger and slower, and the token image is stored with every enrolled face.)
 */
export function encodePng(img: RgbImage): Uint8Array {
  const { width, height, data } = img;
  const stride = width * 3;
  const rows = new Uint8Array((stride + 1) * height);
  for (let y = 0; y < height; y++) {
    const o = y * (stride + 1);
    const s = y * stride;
    if (y === 0) {
      rows[o] = 0; // filter None
      rows.set(data.subarray(0, stride), o + 1);
      continue;
    }
    rows[o] = 2; // filter Up
    for (let i = 0; i < stride; i++) rows[o + 1 + i] = (data[s + i]! - data[s - stride + i]!) & 255;
  }
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type: truecolour RGB
  return concatBytes([
    Uint8Array.from(SIGNATURE),
    chunk('IHDR', header),
    chunk('IDAT', zlibSync(rows, { level: 1 })),
    chunk('IEND', new Uint8Array(0)),
  ]);
}
