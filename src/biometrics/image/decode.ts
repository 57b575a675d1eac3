import jpeg from 'jpeg-js';
import decodeMozjpeg, { init as initMozjpeg } from '@jsquash/jpeg/decode.js';
import { BiometricError } from '../errors.js';
import { jpegOrientation } from './exif.js';
import { DEFAULT_MAX_MEGAPIXELS, imageCost } from './image-cost.js';
import { applyOrientation } from './image.js';
import { type RgbImage } from './raster.js';
import { decodePngData } from './png.js';

/** Formats the face pipeline accepts. */
export type ImageFormat = 'jpeg' | 'png';

/** A decoded, upright image. */
interface DecodedImage extends RgbImage {
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
 * Where the RGB raster of a JPEG decoded by mozjpeg or of a PNG is written: an array of exactly `bytes` bytes,
 * at offset 0 of its buffer (a raster lent for one analysis). The pure-JS JPEG decoder makes its own.
 */
export type RasterSource = (bytes: number) => Uint8Array;

let mozjpegReady: Promise<void> | null = null;
let mozjpegModule: WebAssembly.Module | null = null;
/** libjpeg's last message (it prints warnings and the fatal error; nothing else reads them). */
let mozjpegMessage = '';
const mozjpegOptions = { printErr: (text: string) => (mozjpegMessage = text), print: () => undefined };
/** `init` takes the compiled module and the Emscripten options (its declared type names only the options). */
const startMozjpeg = initMozjpeg as unknown as (module: WebAssembly.Module, options: object) => Promise<void>;

/**
 * Enables the fast JPEG decoder (mozjpeg compiled to WebAssembly, from `@jsquash/jpeg`; about 5-10x
 * faster than the pure JS fallback). Pass the compiled `mozjpeg_dec.wasm` (each runtime loads it its own
 * way: Node reads the file, Workers import it as a module). Without it, `jpeg-js` decodes.
 */
export function configureJpegDecoder(module: WebAssembly.Module): void {
  mozjpegModule = module;
  mozjpegReady = startMozjpeg(module, mozjpegOptions);
}

let decodedObserver: (() => void) | undefined;

/**
 * Calls `observer` each time this thread finishes decoding an image (undefined: no more). The pool's worker
 * reports it, so the pool can stop a decode that runs past its budget and let the analysis that follows run.
 */
export function observeDecodes(observer: (() => void) | undefined): void {
  decodedObserver = observer;
}

/** True when JPEGs are decoded by the mozjpeg wasm decoder. */
function fastJpegEnabled(): boolean {
  return mozjpegReady !== null;
}

/** mozjpeg's RGB raster, or INVALID_IMAGE with libjpeg's own words. */
async function decodeJpegWasm(
  bytes: Uint8Array,
  raster?: RasterSource,
): Promise<{ width: number; height: number; data: Uint8Array }> {
  await mozjpegReady;
  mozjpegMessage = '';
  try {
    const r = await decodeMozjpeg(
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
    );
    const n = r.width * r.height;
    return { width: r.width, height: r.height, data: rgbaToRgb(r.data, n, raster?.(n * 3)) };
  } catch {
    // A fatal libjpeg error may leave the module unusable: start a fresh instance for the next image.
    if (mozjpegModule) mozjpegReady = startMozjpeg(mozjpegModule, mozjpegOptions);
    throw new BiometricError(
      'INVALID_IMAGE',
      `corrupt or truncated JPEG: ${mozjpegMessage || 'the decoder refused it'}`,
    );
  }
}

/** jpeg-js's RGB raster: CMYK and YCCK files, and every JPEG where the wasm decoder is not configured. */
function decodeJpegJs(bytes: Uint8Array, maxMp: number): { width: number; height: number; data: Uint8Array } {
  try {
    return jpeg.decode(bytes, {
      useTArray: true,
      formatAsRGBA: false,
      tolerantDecoding: false,
      maxResolutionInMP: maxMp,
      // Four components of coefficients and the output: the cost bound keeps CMYK files well below this.
      maxMemoryUsageInMB: Math.ceil(maxMp * 24) + 64,
    });
  } catch (e) {
    throw new BiometricError('INVALID_IMAGE', `corrupt or truncated JPEG: ${(e as Error).message ?? String(e)}`);
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
 * Decodes JPEG (mozjpeg wasm when `configureJpegDecoder` was called, else jpeg-js; CMYK always jpeg-js) or PNG
 * bytes into an upright RGB raster (EXIF orientation applied; alpha composited over white; 16-bit, grey and
 * palette PNGs converted). What the decode will cost is judged from the file's structure first (image-cost.ts):
 * nothing is decoded past the bounds.
 *
 * @throws BiometricError UNSUPPORTED_FORMAT for anything but JPEG/PNG (and JPEG codings the decoders do not
 *   take), INVALID_IMAGE for corrupt or truncated files, IMAGE_TOO_LARGE above `limits.maxMegapixels`,
 *   IMAGE_TOO_COSTLY for a file whose structure promises more work than an image of that size may cost.
 * @example
 * const img = await decodeImage(bytes); // { width, height, data: Uint8Array(w*h*3), format: 'jpeg', orientation: 1 }
 */
export async function decodeImage(
  bytes: Uint8Array,
  limits: DecodeLimits = {},
  raster?: RasterSource,
): Promise<DecodedImage> {
  const maxMp = limits.maxMegapixels ?? DEFAULT_MAX_MEGAPIXELS;
  const cost = imageCost(bytes, { maxMegapixels: maxMp, wasmJpeg: fastJpegEnabled(), checkCrc: true });
  if (!cost) {
    const format = sniffFormat(bytes);
    throw new BiometricError('UNSUPPORTED_FORMAT', `unsupported image format (${format.slice(6)}); send JPEG or PNG`);
  }
  if (cost.format === 'png') {
    const data = raster?.(cost.width * cost.height * 3);
    const png = await decodePngData(bytes, cost.png!, data);
    decodedObserver?.();
    return { ...png, format: 'png', orientation: 1 };
  }
  const orientation = jpegOrientation(bytes);
  const raw = cost.decoder === 'wasm-jpeg' ? await decodeJpegWasm(bytes, raster) : decodeJpegJs(bytes, maxMp);
  if (!raw.width || !raw.height || raw.data.length < raw.width * raw.height * 3)
    throw new BiometricError('INVALID_IMAGE', 'JPEG without image data');
  const up = applyOrientation({ width: raw.width, height: raw.height, data: raw.data }, orientation);
  decodedObserver?.();
  return { ...up, format: 'jpeg', orientation };
}
