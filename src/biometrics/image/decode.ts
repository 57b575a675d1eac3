import jpeg from 'jpeg-js';
import decodeMozjpeg, { init as initMozjpeg } from '@jsquash/jpeg/decode.js';
import { decode as decodePngRaw, convertIndexedToRgb } from 'fast-png';
import { BiometricError } from '../errors.js';
import { jpegOrientation } from './exif.js';
import { applyOrientation, type RgbImage } from './image.js';

/** Formats the face pipeline accepts. */
export type ImageFormat = 'jpeg' | 'png';

/** A decoded, upright image. */
export interface DecodedImage extends RgbImage {
  format: ImageFormat;
  /** EXIF orientation found in the file (1 = none); already applied to `data`. */
  orientation: number;
}

/** Limits applied while decoding untrusted bytes. */
export interface DecodeLimits {
  /** Largest accepted image, in megapixels (default {@link DEFAULT_MAX_MEGAPIXELS}). */
  maxMegapixels?: number;
}

/**
 * Where the RGB raster of a JPEG decoded by mozjpeg is written: an array of exactly `bytes` bytes, at offset 0
 * of its buffer (a raster lent for one analysis). Other decodes make their own.
 */
export type RasterSource = (bytes: number) => Uint8Array;

/**
 * Default pixel bound of a decode. Decoding costs in proportion to the pixels the header declares, not to
 * the file's size: a 9 KB JPEG declaring 6300x6300 cost 2.6 s and half a gigabyte under the old bound of 40.
 * A face needs far fewer (the detector sees 320x240, the token image is 240x320); 16 still takes a
 * 12-megapixel phone photo (4032x3024) whole.
 */
export const DEFAULT_MAX_MEGAPIXELS = 16;

let mozjpegReady: Promise<void> | null = null;
let mozjpegModule: WebAssembly.Module | null = null;

/**
 * Enables the fast JPEG decoder (mozjpeg compiled to WebAssembly, from `@jsquash/jpeg`; about 5-10x
 * faster than the pure JS fallback). Pass the compiled `mozjpeg_dec.wasm` (each runtime loads it its own
 * way: Node reads the file, Workers import it as a module). Without it, `jpeg-js` decodes.
 */
export function configureJpegDecoder(module: WebAssembly.Module): void {
  mozjpegModule = module;
  mozjpegReady = initMozjpeg(module);
}

/** True when JPEGs are decoded by the mozjpeg wasm decoder. */
export function fastJpegEnabled(): boolean {
  return mozjpegReady !== null;
}

/** A JPEG must end with an EOI marker (allowing trailing padding some cameras append). */
function hasEoi(b: Uint8Array): boolean {
  for (let i = b.length - 2, stop = Math.max(2, b.length - 65536); i >= stop; i--)
    if (b[i] === 0xff && b[i + 1] === 0xd9) return true;
  return false;
}

async function decodeJpegFast(
  bytes: Uint8Array,
  raster?: RasterSource,
): Promise<{ width: number; height: number; data: Uint8Array } | null> {
  if (!mozjpegReady) return null;
  try {
    await mozjpegReady;
    const r = await decodeMozjpeg(
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
    );
    const n = r.width * r.height;
    return { width: r.width, height: r.height, data: rgbaToRgb(r.data, n, raster?.(n * 3)) };
  } catch {
    // A fatal libjpeg error may leave the module unusable: start a fresh instance, let jpeg-js report.
    if (mozjpegModule) mozjpegReady = initMozjpeg(mozjpegModule);
    return null;
  }
}

/** Little-endian hosts (every one BIMS runs on) read a pixel's four bytes as one 32-bit word, R lowest. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * The RGB bytes of `n` RGBA pixels. Four pixels are read as four 32-bit words and written as three (R of the
 * first pixel lowest), instead of twelve byte stores: the decoder's RGBA answer is copied once here, and the
 * byte-wise loop was a third of a 512x512 JPEG's decoding time.
 */
export function rgbaToRgb(rgba: Uint8Array | Uint8ClampedArray, n: number, into?: Uint8Array): Uint8Array {
  const rgb = into ?? new Uint8Array(n * 3);
  let p = 0;
  if (LITTLE_ENDIAN && rgba.byteOffset % 4 === 0 && rgb.byteOffset % 4 === 0) {
    const words = new Uint32Array(rgba.buffer, rgba.byteOffset, n);
    // rgb's whole words hold 4 pixels each, the last 0-3 pixels go below: every byte is written.
    const out = new Uint32Array(rgb.buffer, rgb.byteOffset, (n >> 2) * 3);
    for (let q = 0; p + 4 <= n; p += 4, q += 3) {
      const w0 = words[p]!,
        w1 = words[p + 1]!,
        w2 = words[p + 2]!,
        w3 = words[p + 3]!;
      out[q] = (w0 & 0xffffff) | (w1 << 24);
      out[q + 1] = ((w1 >>> 8) & 0xffff) | (w2 << 16);
      out[q + 2] = ((w2 >>> 16) & 0xff) | (w3 << 8);
    }
  }
  for (let q = p * 3, s = p * 4; p < n; p++, q += 3, s += 4) {
    rgb[q] = rgba[s]!;
    rgb[q + 1] = rgba[s + 1]!;
    rgb[q + 2] = rgba[s + 2]!;
  }
  return rgb;
}

const PNG_SIG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Identifies the container format from the magic bytes; returns a name for common unsupported types. */
export function sniffFormat(b: Uint8Array): ImageFormat | `other:${string}` {
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (b.length >= 8 && PNG_SIG.every((v, i) => b[i] === v)) return 'png';
  const ascii = (s: number, e: number) => String.fromCharCode(...b.subarray(s, e));
  if (b.length >= 6 && ascii(0, 3) === 'GIF') return 'other:gif';
  if (b.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'other:webp';
  if (b.length >= 2 && b[0] === 0x42 && b[1] === 0x4d) return 'other:bmp';
  if (b.length >= 12 && ascii(4, 8) === 'ftyp') return 'other:heif/avif/mp4';
  if (
    b.length >= 4 &&
    ((b[0] === 0x49 && b[1] === 0x49) || (b[0] === 0x4d && b[1] === 0x4d)) &&
    (b[2] === 42 || b[3] === 42)
  )
    return 'other:tiff';
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0x4f && b[2] === 0xff && b[3] === 0x51) return 'other:jpeg2000';
  return 'other:unknown';
}

/**
 * Decodes JPEG (mozjpeg wasm when `configureJpegDecoder` was called, else jpeg-js) or PNG bytes into an upright RGB raster (EXIF orientation applied; alpha composited over
 * white; 16-bit, grey and palette PNGs converted).
 *
 * @throws BiometricError UNSUPPORTED_FORMAT for anything but JPEG/PNG, INVALID_IMAGE for corrupt or
 *   truncated files, IMAGE_TOO_LARGE above `limits.maxMegapixels`.
 * @example
 * const img = await decodeImage(bytes); // { width, height, data: Uint8Array(w*h*3), format: 'jpeg', orientation: 1 }
 */
export async function decodeImage(
  bytes: Uint8Array,
  limits: DecodeLimits = {},
  raster?: RasterSource,
): Promise<DecodedImage> {
  const maxMp = limits.maxMegapixels ?? DEFAULT_MAX_MEGAPIXELS;
  const format = sniffFormat(bytes);
  if (format === 'jpeg') {
    const orientation = jpegOrientation(bytes);
    if (!hasEoi(bytes)) throw new BiometricError('INVALID_IMAGE', 'truncated JPEG (no end-of-image marker)');
    const size = jpegSize(bytes);
    if (size && size.w * size.h > maxMp * 1e6)
      throw new BiometricError('IMAGE_TOO_LARGE', `JPEG larger than ${maxMp} megapixels`);
    let raw: { width: number; height: number; data: Uint8Array } | null = await decodeJpegFast(bytes, raster);
    if (!raw)
      try {
        raw = jpeg.decode(bytes, {
          useTArray: true,
          formatAsRGBA: false,
          tolerantDecoding: false,
          maxResolutionInMP: maxMp,
          maxMemoryUsageInMB: Math.ceil(maxMp * 12) + 64,
        });
      } catch (e) {
        const msg = (e as Error).message ?? String(e);
        if (/maxResolutionInMP|exceeds/i.test(msg))
          throw new BiometricError('IMAGE_TOO_LARGE', `JPEG larger than ${maxMp} megapixels`);
        throw new BiometricError('INVALID_IMAGE', `corrupt or truncated JPEG: ${msg}`);
      }
    if (!raw || !raw.width || !raw.height || raw.data.length < raw.width * raw.height * 3) {
      throw new BiometricError('INVALID_IMAGE', 'JPEG without image data');
    }
    const up = applyOrientation({ width: raw.width, height: raw.height, data: raw.data }, orientation);
    return { ...up, format, orientation };
  }
  if (format === 'png') return { ...decodePng(bytes, maxMp), format, orientation: 1 };
  throw new BiometricError('UNSUPPORTED_FORMAT', `unsupported image format (${format.slice(6)}); send JPEG or PNG`);
}

/**
 * Width and height a JPEG or PNG declares in its header (JPEG: the first SOFn frame header; PNG: IHDR), read
 * without decoding anything, so that an image's cost can be judged before any work is spent on it. Null when
 * the bytes are neither, or the header cannot be found (the decoder then refuses them).
 */
export function imageDimensions(b: Uint8Array): { width: number; height: number } | null {
  const format = sniffFormat(b);
  if (format === 'jpeg') {
    const size = jpegSize(b);
    return size ? { width: size.w, height: size.h } : null;
  }
  // IHDR must be the first chunk (PNG 11.2.2); a file hiding it further on is refused by the decoder too.
  if (format === 'png' && b.length >= 24 && String.fromCharCode(...b.subarray(12, 16)) === 'IHDR') {
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    return { width: dv.getUint32(16), height: dv.getUint32(20) };
  }
  return null;
}

/** Frame size from the first SOFn marker, or null. */
function jpegSize(b: Uint8Array): { w: number; h: number } | null {
  let off = 2;
  while (off + 9 < b.length) {
    if (b[off] !== 0xff) return null;
    const m = b[off + 1];
    // Any number of 0xFF fill bytes may precede a marker (ITU T.81 B.1.1.2): libjpeg skips them, so must we.
    if (m === 0xff) {
      off += 1;
      continue;
    }
    if (m === 0xd8 || (m >= 0xd0 && m <= 0xd7) || m === 0x01) {
      off += 2;
      continue;
    }
    const len = (b[off + 2] << 8) | b[off + 3];
    if (m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc)
      return { h: (b[off + 5] << 8) | b[off + 6], w: (b[off + 7] << 8) | b[off + 8] };
    if (m === 0xda) return null;
    off += 2 + len;
  }
  return null;
}

function decodePng(bytes: Uint8Array, maxMp: number): RgbImage {
  // Check the declared size before inflating (IHDR is the first chunk).
  if (bytes.length < 33) throw new BiometricError('INVALID_IMAGE', 'truncated PNG');
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const w = dv.getUint32(16),
    h = dv.getUint32(20);
  if (w === 0 || h === 0) throw new BiometricError('INVALID_IMAGE', 'PNG with zero size');
  if (w * h > maxMp * 1e6) throw new BiometricError('IMAGE_TOO_LARGE', `PNG larger than ${maxMp} megapixels`);
  let png: ReturnType<typeof decodePngRaw>;
  try {
    png = decodePngRaw(bytes, { checkCrc: true });
  } catch (e) {
    throw new BiometricError('INVALID_IMAGE', `corrupt or truncated PNG: ${(e as Error).message}`);
  }
  let data = png.data;
  let channels = png.channels;
  if (png.palette) {
    data = convertIndexedToRgb(png as Parameters<typeof convertIndexedToRgb>[0]);
    channels = data.length / (png.width * png.height);
  }
  const n = png.width * png.height;
  if (data.length < n * channels) throw new BiometricError('INVALID_IMAGE', 'PNG without image data');
  const shift = png.depth === 16 && !png.palette ? 8 : 0;
  const maxV = png.depth < 8 && !png.palette ? (1 << png.depth) - 1 : 0;
  const out = new Uint8Array(n * 3);
  for (let p = 0; p < n; p++) {
    let r: number,
      g: number,
      b: number,
      a = 255;
    const q = p * channels;
    if (channels <= 2) {
      r = g = b = data[q] >> shift;
      if (channels === 2) a = data[q + 1] >> shift;
    } else {
      r = data[q] >> shift;
      g = data[q + 1] >> shift;
      b = data[q + 2] >> shift;
      if (channels === 4) a = data[q + 3] >> shift;
    }
    if (maxV) {
      r = Math.round((r * 255) / maxV);
      g = Math.round((g * 255) / maxV);
      b = Math.round((b * 255) / maxV);
    }
    if (a !== 255) {
      // Composite over white: a transparent background must not read as a dark frame.
      const f = a / 255;
      r = Math.round(r * f + 255 * (1 - f));
      g = Math.round(g * f + 255 * (1 - f));
      b = Math.round(b * f + 255 * (1 - f));
    }
    out[p * 3] = r;
    out[p * 3 + 1] = g;
    out[p * 3 + 2] = b;
  }
  return { width: png.width, height: png.height, data: out };
}
