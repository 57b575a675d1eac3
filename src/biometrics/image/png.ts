// PNG decoding within the bound its header sets: the image data is inflated by the runtime's own zlib
// (DecompressionStream, on every runtime BIMS runs on) and read only up to the bytes the header implies; one
// byte more and the file is refused, so a 64x64 header over data that inflates to a gibibyte costs the inflation
// of 12 KB and one chunk more. Ancillary chunks are never inflated. Rows are unfiltered in place and converted
// straight to RGB: 16-bit samples keep their high byte, grey levels below 8 bits are scaled to 0..255, alpha
// (and a palette's tRNS) is composited over white.
import { BiometricError } from '../errors.js';
import type { RgbImage } from './raster.js';
import { ADAM7, type PngStructure, rowBytes } from './png-structure.js';

const invalid = (why: string) => new BiometricError('INVALID_IMAGE', `corrupt or truncated PNG: ${why}`);

/**
 * Decodes the PNG whose structure `readPngStructure` read, into `raster` when given (an array of exactly
 * width x height x 3 bytes).
 *
 * @throws BiometricError INVALID_IMAGE when the image data is corrupt, inflates to fewer bytes than the header
 *   implies, or to more (the bytes past the bound are never produced beyond one chunk of the inflater).
 */
export async function decodePngData(bytes: Uint8Array, s: PngStructure, raster?: Uint8Array): Promise<RgbImage> {
  const rows = await inflateExactly(bytes, s);
  const out = raster ?? new Uint8Array(s.width * s.height * 3);
  const bpp = Math.max(1, (s.channels * s.depth) >> 3);
  const pixel = pixelWriter(s, out);
  if (!s.interlaced) {
    unfilterPass(rows, 0, s.width, s.height, s, bpp, (row, at, y) => pixel(row, at, s.width, y * s.width, 1));
  } else {
    let at = 0;
    for (const [x0, y0, dx, dy] of ADAM7) {
      const w = Math.ceil((s.width - x0) / dx);
      const h = Math.ceil((s.height - y0) / dy);
      if (w <= 0 || h <= 0) continue;
      at = unfilterPass(rows, at, w, h, s, bpp, (row, start, y) =>
        pixel(row, start, w, (y0 + y * dy) * s.width + x0, dx),
      );
    }
  }
  return { width: s.width, height: s.height, data: out };
}

/** The image data inflated to exactly `s.inflatedBytes` bytes. */
async function inflateExactly(bytes: Uint8Array, s: PngStructure): Promise<Uint8Array> {
  const compressed = new Uint8Array(s.dataBytes);
  let at = 0;
  for (const { start, end } of s.data) {
    compressed.set(bytes.subarray(start, end), at);
    at += end - start;
  }
  const out = new Uint8Array(s.inflatedBytes);
  const stream = new DecompressionStream('deflate');
  const writer = stream.writable.getWriter();
  // Their failures are the reader's: a corrupt stream errors both sides.
  writer.write(compressed).catch(() => undefined);
  writer.close().catch(() => undefined);
  const reader = stream.readable.getReader();
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (total + value.length > out.length)
        throw invalid(`the image data inflates past the ${out.length} bytes its ${s.width}x${s.height} header implies`);
      out.set(value, total);
      total += value.length;
    }
  } catch (e) {
    // The zlib trailer (Adler-32) or bytes after the stream may be wrong once every row is in: libpng and the
    // decoder used before took such files, and nothing of the image is missing.
    if (BiometricError.is(e) || total !== out.length) {
      await reader.cancel().catch(() => undefined);
      throw BiometricError.is(e) ? e : invalid(`the image data does not inflate (${(e as Error).message})`);
    }
  }
  if (total < out.length) throw invalid(`the image data ends after ${total} of ${out.length} bytes`);
  return out;
}

/**
 * Unfilters the `h` rows of one pass (each a filter byte and `rowBytes` bytes) in place from `at`, handing each
 * row to `emit`; returns where the next pass starts.
 */
function unfilterPass(
  d: Uint8Array,
  at: number,
  w: number,
  h: number,
  s: PngStructure,
  bpp: number,
  emit: (row: Uint8Array, start: number, y: number) => void,
): number {
  const n = rowBytes(w, s.channels, s.depth);
  for (let y = 0; y < h; y++, at += n + 1) {
    const filter = d[at]!;
    const p = at + 1;
    const up = y > 0 ? p - n - 1 : -1;
    if (filter === 1) for (let i = bpp; i < n; i++) d[p + i] = (d[p + i]! + d[p + i - bpp]!) & 255;
    else if (filter === 2) {
      if (up >= 0) for (let i = 0; i < n; i++) d[p + i] = (d[p + i]! + d[up + i]!) & 255;
    } else if (filter === 3) {
      for (let i = 0; i < n; i++) {
        const a = i >= bpp ? d[p + i - bpp]! : 0;
        const b = up >= 0 ? d[up + i]! : 0;
        d[p + i] = (d[p + i]! + ((a + b) >> 1)) & 255;
      }
    } else if (filter === 4) {
      for (let i = 0; i < n; i++) {
        const a = i >= bpp ? d[p + i - bpp]! : 0;
        const b = up >= 0 ? d[up + i]! : 0;
        const c = i >= bpp && up >= 0 ? d[up + i - bpp]! : 0;
        const pa = Math.abs(b - c);
        const pb = Math.abs(a - c);
        const pc = Math.abs(a + b - 2 * c);
        d[p + i] = (d[p + i]! + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)) & 255;
      }
    } else if (filter !== 0) throw invalid(`unknown row filter ${filter}`);
    emit(d, p, y);
  }
  return at;
}

let overWhite: Uint8Array | undefined;
/**
 * A sample `v` with alpha `a` (both 0..255) composited over white, at [a * 256 + v]: the same rounding as the
 * decoder before (v * f + 255 * (1 - f), f = a / 255), computed once for the 65,536 pairs.
 */
function overTable(): Uint8Array {
  if (!overWhite) {
    overWhite = new Uint8Array(65_536);
    for (let a = 0; a < 256; a++) {
      const f = a / 255;
      for (let v = 0; v < 256; v++) overWhite[a * 256 + v] = Math.round(v * f + 255 * (1 - f));
    }
  }
  return overWhite;
}

/**
 * Writes the `count` pixels of one unfiltered row (from `start` in `row`) to `out`, the first at pixel index
 * `first`, each next `step` pixels further.
 */
function pixelWriter(
  s: PngStructure,
  out: Uint8Array,
): (row: Uint8Array, start: number, count: number, first: number, step: number) => void {
  const { depth, colourType } = s;
  // 16-bit samples keep their high byte: the byte offset of sample k of the row is k * bytesPerSample.
  const size = depth === 16 ? 2 : 1;
  if (colourType === 3 || depth < 8) {
    const max = (1 << depth) - 1;
    const palette = s.palette;
    const entries = palette ? palette.length / 3 : 0;
    const alpha = s.paletteAlpha;
    const over = overTable();
    return (row, start, count, first, step) => {
      for (let x = 0, o = first * 3; x < count; x++, o += step * 3) {
        const bit = x * depth;
        const v = depth === 8 ? row[start + x]! : (row[start + (bit >> 3)]! >> (8 - depth - (bit & 7))) & max;
        if (!palette) {
          const g = depth === 8 ? v : Math.round((v * 255) / max);
          out[o] = out[o + 1] = out[o + 2] = g;
          continue;
        }
        if (v >= entries) throw invalid(`a pixel of palette index ${v} in a palette of ${entries} colours`);
        const a = (alpha && v < alpha.length ? alpha[v]! : 255) * 256;
        out[o] = over[a + palette[v * 3]!]!;
        out[o + 1] = over[a + palette[v * 3 + 1]!]!;
        out[o + 2] = over[a + palette[v * 3 + 2]!]!;
      }
    };
  }
  const channels = s.channels;
  const over = overTable();
  const stride = channels * size;
  if (channels <= 2)
    return (row, start, count, first, step) => {
      for (let x = 0, o = first * 3, q = start; x < count; x++, o += step * 3, q += stride) {
        const g = channels === 2 ? over[row[q + size]! * 256 + row[q]!]! : row[q]!;
        out[o] = out[o + 1] = out[o + 2] = g;
      }
    };
  return (row, start, count, first, step) => {
    for (let x = 0, o = first * 3, q = start; x < count; x++, o += step * 3, q += stride) {
      const a = channels === 4 ? row[q + 3 * size]! * 256 : 255 * 256;
      out[o] = over[a + row[q]!]!;
      out[o + 1] = over[a + row[q + size]!]!;
      out[o + 2] = over[a + row[q + 2 * size]!]!;
    }
  };
}
