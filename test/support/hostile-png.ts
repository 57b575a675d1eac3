// Generated hostile PNG files (never committed). Deflate's best ratio is about 1032:1, so a file of kilobytes can
// inflate to hundreds of megabytes whatever its header says; see docs/admission.md for the bounds.
import { constants, deflateRawSync } from 'node:zlib';
import { zlibSync } from 'fflate';
import { crc32 } from '../../src/biometrics/crc32.js';

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** One chunk with its length and CRC. */
export function pngChunk(type: string, data: ArrayLike<number>): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/** IHDR payload: size, bit depth, colour type (default 8-bit truecolour), interlace. */
export function ihdr(width: number, height: number, { depth = 8, colour = 2, interlace = 0 } = {}): Uint8Array {
  const b = new Uint8Array(13);
  const v = new DataView(b.buffer);
  v.setUint32(0, width);
  v.setUint32(4, height);
  b[8] = depth;
  b[9] = colour;
  b[12] = interlace;
  return b;
}

/** A PNG file of these chunks, between the signature and IEND. */
export function pngFile(chunks: readonly Uint8Array[]): Uint8Array {
  const parts = [Uint8Array.from(SIGNATURE), ...chunks, pngChunk('IEND', [])];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * A zlib stream of `bytes` zero bytes, built without holding them: one deflated piece of 8 MiB of zeros (sync
 * flushed, so it ends on a byte boundary and is not final) repeated, then a final block for the rest, then the
 * Adler-32 of that many zeros (a = 1, b = n mod 65521). About 8 KB per 8 MiB: deflate's ratio of ~1000:1.
 */
export function zerosZlib(bytes: number): Uint8Array {
  const piece = 8 * 2 ** 20;
  const pieces = Math.floor(bytes / piece);
  const middle = pieces ? deflateRawSync(new Uint8Array(piece), { level: 9, finishFlush: constants.Z_SYNC_FLUSH }) : [];
  const last = deflateRawSync(new Uint8Array(bytes - pieces * piece), { level: 9 });
  const out = new Uint8Array(2 + middle.length * pieces + last.length + 4);
  out.set([0x78, 0xda], 0);
  let at = 2;
  for (let i = 0; i < pieces; i++, at += middle.length) out.set(middle, at);
  out.set(last, at);
  new DataView(out.buffer).setUint32(out.length - 4, (((bytes % 65521) << 16) | 1) >>> 0);
  return out;
}

/** The PNG of issue 32's sixth finding: a `width`x`height` header whose image data inflates to `inflated` bytes. */
export function inflationBombPng(width: number, height: number, inflated: number): Uint8Array {
  return pngFile([pngChunk('IHDR', ihdr(width, height)), pngChunk('IDAT', zerosZlib(inflated))]);
}

/** A valid image whose data is split into IDAT chunks of `size` bytes each (thousands of chunks). */
export function manyIdatPng(width: number, height: number, size: number): Uint8Array {
  const rows = new Uint8Array((width * 3 + 1) * height);
  const z = zlibSync(rows, { level: 0 });
  const chunks = [pngChunk('IHDR', ihdr(width, height))];
  for (let at = 0; at < z.length; at += size) chunks.push(pngChunk('IDAT', z.subarray(at, at + size)));
  return pngFile(chunks);
}

/** A small valid image preceded by `count` ancillary chunks of `size` bytes each. */
export function manyChunksPng(count: number, size: number, type = 'tEXt'): Uint8Array {
  const data = new Uint8Array(size).fill(0x41);
  const chunks = [pngChunk('IHDR', ihdr(8, 8))];
  for (let i = 0; i < count; i++) chunks.push(pngChunk(type, data));
  chunks.push(pngChunk('IDAT', zlibSync(new Uint8Array(8 * 25))));
  return pngFile(chunks);
}

/** A compressed ancillary chunk (iCCP, zTXt or iTXt) whose text inflates to `inflated` bytes, on a small image. */
export function compressedChunkBombPng(type: 'iCCP' | 'zTXt' | 'iTXt', inflated: number): Uint8Array {
  const keyword = [...'bomb'].map((c) => c.charCodeAt(0));
  const prefix =
    type === 'iTXt'
      ? [...keyword, 0, 1, 0, 0, 0] /* compressed, method 0, no language, no translated keyword */
      : [...keyword, 0, 0];
  const z = zerosZlib(inflated);
  const payload = new Uint8Array(prefix.length + z.length);
  payload.set(prefix);
  payload.set(z, prefix.length);
  return pngFile([
    pngChunk('IHDR', ihdr(8, 8)),
    pngChunk(type, payload),
    pngChunk('IDAT', zlibSync(new Uint8Array(8 * 25))),
  ]);
}

/** An APNG: `frames` fcTL/fdAT frames of `width`x`height` each (the default image is frame 0). */
export function animatedPng(width: number, height: number, frames: number): Uint8Array {
  const rows = zlibSync(new Uint8Array((width * 3 + 1) * height), { level: 9 });
  const actl = new Uint8Array(8);
  new DataView(actl.buffer).setUint32(0, frames);
  const fctl = (seq: number) => {
    const b = new Uint8Array(26);
    const v = new DataView(b.buffer);
    v.setUint32(0, seq);
    v.setUint32(4, width);
    v.setUint32(8, height);
    return pngChunk('fcTL', b);
  };
  const chunks = [pngChunk('IHDR', ihdr(width, height)), pngChunk('acTL', actl), fctl(0), pngChunk('IDAT', rows)];
  for (let f = 1, seq = 1; f < frames; f++) {
    chunks.push(fctl(seq++));
    const fdat = new Uint8Array(4 + rows.length);
    new DataView(fdat.buffer).setUint32(0, seq++);
    fdat.set(rows, 4);
    chunks.push(pngChunk('fdAT', fdat));
  }
  return pngFile(chunks);
}

/** A valid PNG at the pixel limit whose data compresses to almost nothing (the costliest PNG admitted). */
export function flatPng(width: number, height: number, { colour = 6, depth = 8 } = {}): Uint8Array {
  const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[colour as 0 | 2 | 3 | 4 | 6];
  const rowBytes = Math.ceil((width * channels * depth) / 8) + 1;
  return pngFile([
    pngChunk('IHDR', ihdr(width, height, { colour, depth })),
    pngChunk('IDAT', zerosZlib(rowBytes * height)),
  ]);
}
