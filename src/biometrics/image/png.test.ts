import { decode as fastPngDecode } from 'fast-png';
import { zlibSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { ihdr, pngChunk, pngFile } from '../../../test/support/hostile-png.js';
import { decodeImage } from './decode.js';
import { ADAM7, readPngStructure, rowBytes } from './png-structure.js';

/** A deterministic pseudo-random byte stream. */
function bytesOf(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed * 2654435761;
  for (let i = 0; i < n; i++) {
    x = (x ^ (x << 13)) >>> 0;
    x = (x ^ (x >>> 17)) >>> 0;
    x = (x ^ (x << 5)) >>> 0;
    out[i] = x & 255;
  }
  return out;
}

const paeth = (a: number, b: number, c: number) => {
  const pa = Math.abs(b - c);
  const pb = Math.abs(a - c);
  const pc = Math.abs(a + b - 2 * c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
};

/** Filters `rows` (each `n` bytes) with filter types taken in turn from 0..4, as an encoder may choose. */
function filterRows(rows: Uint8Array[], n: number, bpp: number, first: number): Uint8Array {
  const out = new Uint8Array(rows.length * (n + 1));
  rows.forEach((row, y) => {
    const up = y > 0 ? rows[y - 1]! : new Uint8Array(n);
    const type = (first + y) % 5;
    out[y * (n + 1)] = type;
    for (let i = 0; i < n; i++) {
      const a = i >= bpp ? row[i - bpp]! : 0;
      const b = up[i]!;
      const c = i >= bpp ? up[i - bpp]! : 0;
      const predictor = [0, a, b, (a + b) >> 1, paeth(a, b, c)][type]!;
      out[y * (n + 1) + 1 + i] = (row[i]! - predictor) & 255;
    }
  });
  return out;
}

/** The PNG of `samples` (rows of packed samples of the full image), interlaced or not, with every filter type. */
function encode(
  width: number,
  height: number,
  colour: number,
  depth: number,
  samples: Uint8Array,
  interlace: boolean,
  extra: Uint8Array[] = [],
): Uint8Array {
  const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[colour as 0]!;
  const bitsPerPixel = channels * depth;
  const bpp = Math.max(1, bitsPerPixel >> 3);
  const full = rowBytes(width, channels, depth);
  // Sub-byte pixels (one sample of 1, 2 or 4 bits) are moved bit by bit, whole-byte pixels byte by byte.
  const pixelBits = (x: number, y: number) => {
    const bit = x * bitsPerPixel;
    return (samples[y * full + (bit >> 3)]! >> (8 - bitsPerPixel - (bit & 7))) & ((1 << bitsPerPixel) - 1);
  };
  const passRows = (x0: number, y0: number, dx: number, dy: number) => {
    const w = Math.ceil((width - x0) / dx);
    const h = Math.ceil((height - y0) / dy);
    if (w <= 0 || h <= 0) return new Uint8Array(0);
    const n = rowBytes(w, channels, depth);
    const rows: Uint8Array[] = [];
    for (let r = 0; r < h; r++) {
      const row = new Uint8Array(n);
      const y = y0 + r * dy;
      for (let i = 0; i < w; i++) {
        const x = x0 + i * dx;
        if (bitsPerPixel >= 8) row.set(samples.subarray(y * full + x * bpp, y * full + (x + 1) * bpp), i * bpp);
        else row[(i * bitsPerPixel) >> 3]! |= pixelBits(x, y) << (8 - bitsPerPixel - ((i * bitsPerPixel) & 7));
      }
      rows.push(row);
    }
    return filterRows(rows, n, bpp, x0 + y0);
  };
  const data = interlace ? ADAM7.map(([x0, y0, dx, dy]) => passRows(x0, y0, dx, dy)) : [passRows(0, 0, 1, 1)];
  const raw = new Uint8Array(data.reduce((n, d) => n + d.length, 0));
  let at = 0;
  for (const d of data) {
    raw.set(d, at);
    at += d.length;
  }
  const z = zlibSync(raw);
  // Split the data over several IDAT chunks, as writers do.
  const idats = [pngChunk('IDAT', z.subarray(0, z.length >> 1)), pngChunk('IDAT', z.subarray(z.length >> 1))];
  return pngFile([
    pngChunk('IHDR', ihdr(width, height, { depth, colour, interlace: interlace ? 1 : 0 })),
    ...extra,
    ...idats,
  ]);
}

/** The RGB the old decoder (fast-png plus the conversion it was followed by) gives for the same file. */
function viaFastPng(bytes: Uint8Array): number[] {
  const png = fastPngDecode(bytes);
  const out: number[] = [];
  const n = png.width * png.height;
  const shift = png.depth === 16 && !png.palette ? 8 : 0;
  const maxV = png.depth < 8 && !png.palette ? (1 << png.depth) - 1 : 0;
  for (let p = 0; p < n; p++) {
    let px: number[];
    let a = 255;
    if (png.palette) {
      const bit = (p % png.width) * png.depth;
      const rowStart = Math.floor(p / png.width) * Math.ceil((png.width * png.depth) / 8);
      const idx = (png.data[rowStart + (bit >> 3)]! >> (8 - png.depth - (bit & 7))) & ((1 << png.depth) - 1);
      const entry = png.palette[idx]!;
      px = entry.slice(0, 3);
      if (entry.length === 4) a = entry[3]!;
    } else {
      const c = png.channels;
      const v = Array.from({ length: c }, (_, k) => png.data[p * c + k]! >> shift);
      if (maxV) {
        const bit = (p % png.width) * png.depth;
        const rowStart = Math.floor(p / png.width) * Math.ceil((png.width * png.depth) / 8);
        v[0] = Math.round(
          ((((png.data as Uint8Array)[rowStart + (bit >> 3)]! >> (8 - png.depth - (bit & 7))) & maxV) * 255) / maxV,
        );
      }
      px = c <= 2 ? [v[0]!, v[0]!, v[0]!] : v.slice(0, 3);
      if (c === 2 || c === 4) a = v[c - 1]!;
    }
    if (a !== 255) {
      const f = a / 255;
      px = px.map((x) => Math.round(x * f + 255 * (1 - f)));
    }
    out.push(...px);
  }
  return out;
}

/** The RGB of packed `samples` by the PNG rules, pixel by pixel (the reference the decoder is held to). */
function expectedRgb(
  width: number,
  height: number,
  colour: number,
  depth: number,
  samples: Uint8Array,
  palette?: Uint8Array,
  alpha?: Uint8Array,
): number[] {
  const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[colour as 0]!;
  const full = rowBytes(width, channels, depth);
  const sample = (x: number, y: number, k: number) => {
    let v = 0;
    for (let b = 0; b < depth; b++) {
      const bit = (x * channels + k) * depth + b;
      v = v * 2 + ((samples[y * full + (bit >> 3)]! >> (7 - (bit & 7))) & 1);
    }
    return depth === 16 ? v >> 8 : v;
  };
  const out: number[] = [];
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      let px: number[];
      let a = 255;
      if (colour === 3) {
        const i = sample(x, y, 0);
        px = [palette![i * 3]!, palette![i * 3 + 1]!, palette![i * 3 + 2]!];
        if (alpha && i < alpha.length) a = alpha[i]!;
      } else {
        const v = Array.from({ length: channels }, (_, k) => sample(x, y, k));
        const grey = depth < 8 ? Math.round((v[0]! * 255) / ((1 << depth) - 1)) : v[0]!;
        px = channels <= 2 ? [grey, grey, grey] : v.slice(0, 3);
        if (channels === 2 || channels === 4) a = v[channels - 1]!;
      }
      if (a !== 255) {
        const f = a / 255;
        px = px.map((c) => Math.round(c * f + 255 * (1 - f)));
      }
      out.push(...px);
    }
  return out;
}

describe('PNG decoding within the bound of its header', () => {
  const formats: [number, number][] = [
    [0, 1],
    [0, 2],
    [0, 4],
    [0, 8],
    [0, 16],
    [2, 8],
    [2, 16],
    [3, 1],
    [3, 2],
    [3, 4],
    [3, 8],
    [4, 8],
    [4, 16],
    [6, 8],
    [6, 16],
  ];

  it('decodes every colour type and depth, every row filter, plain and Adam7, as the previous decoder did', async () => {
    for (const [colour, depth] of formats)
      for (const interlace of [false, true])
        for (const [width, height] of [
          [1, 1],
          [13, 7],
          [33, 17],
        ] as const) {
          const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[colour as 0]!;
          const samples = bytesOf(rowBytes(width, channels, depth) * height, width * 31 + colour * 7 + depth);
          const extra: Uint8Array[] = [];
          const palette = colour === 3 ? bytesOf((1 << depth) * 3, depth) : undefined;
          const alpha = colour === 3 ? bytesOf((1 << depth) >> 1, depth + 1) : undefined;
          if (palette && alpha) extra.push(pngChunk('PLTE', palette), pngChunk('tRNS', alpha));
          const bytes = encode(width, height, colour, depth, samples, interlace, extra);
          const label = `colour ${colour}, ${depth} bits, ${width}x${height}${interlace ? ', Adam7' : ''}`;
          const ours = await decodeImage(bytes);
          expect([ours.width, ours.height], label).toEqual([width, height]);
          const expected = expectedRgb(width, height, colour, depth, samples, palette, alpha);
          expect(Array.from(ours.data), label).toEqual(expected);
          // The decoder used before agrees, except on Adam7 below 8 bits, which it read wrongly.
          if (!interlace || depth >= 8) expect(viaFastPng(bytes), label).toEqual(expected);
        }
  });

  it('refuses image data that inflates past what the header implies, and data that stops short', async () => {
    const rows = (w: number, h: number) => new Uint8Array((w * 3 + 1) * h);
    const file = (w: number, h: number, data: Uint8Array) =>
      pngFile([pngChunk('IHDR', ihdr(w, h)), pngChunk('IDAT', zlibSync(data))]);
    expect(readPngStructure(file(4, 3, rows(4, 3))).inflatedBytes).toBe(39);
    await expect(decodeImage(file(4, 3, rows(4, 4)))).rejects.toMatchObject({
      code: 'INVALID_IMAGE',
      message: expect.stringContaining('inflates past the 39 bytes its 4x3 header implies'),
    });
    await expect(decodeImage(file(4, 3, rows(4, 2)))).rejects.toMatchObject({
      code: 'INVALID_IMAGE',
      message: expect.stringContaining('ends after 26 of 39 bytes'),
    });
    await expect(decodeImage(file(4, 3, rows(4, 3)))).resolves.toMatchObject({ width: 4, height: 3 });
  });

  it('skips ancillary chunks unread and refuses unknown critical ones, PLTE after the data and IDAT apart', async () => {
    const idat = pngChunk('IDAT', zlibSync(new Uint8Array(2 * 7)));
    const head = pngChunk('IHDR', ihdr(2, 2));
    const garbage = pngChunk('zTXt', bytesOf(5000, 3)); // not even valid zlib: never read
    await expect(decodeImage(pngFile([head, garbage, idat]))).resolves.toMatchObject({ width: 2 });
    await expect(decodeImage(pngFile([head, pngChunk('ABCD', [1]), idat]))).rejects.toMatchObject({
      code: 'INVALID_IMAGE',
      message: expect.stringContaining('unknown critical chunk'),
    });
    const half = zlibSync(new Uint8Array(2 * 7));
    const split = [pngChunk('IDAT', half.subarray(0, 4)), garbage, pngChunk('IDAT', half.subarray(4))];
    await expect(decodeImage(pngFile([head, ...split]))).rejects.toMatchObject({
      message: expect.stringContaining('not consecutive'),
    });
  });
});
