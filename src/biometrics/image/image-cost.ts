// What decoding an image will cost, judged from its structure before any of it is decoded, and the bounds past
// which it is refused (docs/admission.md). The same judgement runs at admission (to refuse a request before
// anything is queued), in the pool (to weigh a job and set its budget) and in the decoder itself (so that every
// caller, the inline extractor included, gets the bound).
import { BiometricError } from '../errors.js';
import { type JpegStructure, readJpegStructure } from './jpeg-structure.js';
import { type PngStructure, readPngStructure } from './png-structure.js';

/** The default pixel bound (also `BIMS_MAX_IMAGE_MEGAPIXELS`'s default). */
export const DEFAULT_MAX_MEGAPIXELS = 16;

/**
 * The entropy decoder's work a JPEG may ask for, in passes over every block of one component of the largest
 * image admitted: 48, where libjpeg's progressive script for a 4:4:4 colour image makes 14 and a baseline file
 * 3. At 16 megapixels that is 12 million block visits, a few tenths of a second with the wasm decoder.
 */
export const JPEG_COMPONENT_PASSES = 48;
/** A restart interval costs the decoder about as much as visiting this many blocks (measured: ~160 vs ~30 ns). */
export const RESTART_WEIGHT = 5;
/** The pure-JavaScript JPEG decoder (jpeg-js) takes about this many times the wasm decoder's time per block. */
export const JS_DECODER_WEIGHT = 8;

/**
 * Reference costs, in nanoseconds of CPU on one core of the 2-core EPYC the bounds were measured on (`npm run
 * bench -- hostile-decode`, docs/admission.md), of what each decoder works through. They weigh jobs and set their
 * budgets; the refusals above do not depend on them.
 */
const NS = {
  /** mozjpeg: an output pixel per component (colour conversion, upsampling, the RGB copy): grey 10, colour 18. */
  jpegPixelBase: 6,
  jpegPixelPerComponent: 4,
  /** A block visited by a scan (15 when the scan is empty), a restart interval, a byte of entropy-coded data. */
  jpegBlock: 15,
  jpegRestart: 90,
  jpegByte: 28,
  /** PNG: a byte inflated and unfiltered, a byte of compressed data (CRC, inflater input), an output pixel. */
  pngInflated: 5.5,
  pngCompressed: 5.5,
  pngPixel: 12,
};

/** An image's size, format and the decoding work it promises. */
export interface ImageCost {
  format: 'jpeg' | 'png';
  width: number;
  height: number;
  /** Estimated milliseconds of decoding on one core of the reference host. */
  decodeMs: number;
  /** The decoder that will run: the wasm JPEG decoder, the pure-JS one (CMYK, or no wasm), or the PNG decoder. */
  decoder: 'wasm-jpeg' | 'js-jpeg' | 'png';
  jpeg?: JpegStructure;
  png?: PngStructure;
}

/** Options of {@link imageCost}. */
export interface CostOptions {
  /** Largest accepted image, in megapixels (default {@link DEFAULT_MAX_MEGAPIXELS}). */
  maxMegapixels?: number;
  /** JPEGs are decoded by the wasm decoder (mozjpeg) when it can; false: by jpeg-js (default true). */
  wasmJpeg?: boolean;
  /** Check the PNG chunks' CRCs while reading them (the decoder does; admission need not). */
  checkCrc?: boolean;
}

const tooLarge = (kind: string, w: number, h: number, maxMp: number) =>
  new BiometricError(
    'IMAGE_TOO_LARGE',
    `the ${kind} is ${w}x${h} (${((w * h) / 1e6).toFixed(1)} megapixels); at most ${maxMp} megapixels are accepted`,
  );

/**
 * Reads a JPEG's markers or a PNG's chunks and judges what decoding it will cost. Null for bytes that are
 * neither (the decoder names their format).
 *
 * @throws BiometricError IMAGE_TOO_LARGE over the pixel bound; IMAGE_TOO_COSTLY for a JPEG whose scans would
 *   visit more blocks than {@link JPEG_COMPONENT_PASSES} passes over the largest image, or past the scan,
 *   segment or chunk counts; INVALID_IMAGE and UNSUPPORTED_FORMAT from the structure readers.
 */
export function imageCost(bytes: Uint8Array, opts: CostOptions = {}): ImageCost | null {
  const maxMp = opts.maxMegapixels ?? DEFAULT_MAX_MEGAPIXELS;
  const maxPixels = maxMp * 1e6;
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    const s = readJpegStructure(bytes);
    const pixels = s.width * s.height;
    if (pixels > maxPixels) throw tooLarge('JPEG', s.width, s.height, maxMp);
    // mozjpeg's output is RGB(A) from 1 or 3 components; 4 (CMYK, YCCK) go to jpeg-js.
    const js = opts.wasmJpeg === false || s.components.length === 4;
    const weight = js ? JS_DECODER_WEIGHT : 1;
    const work = (s.frameBlocks + s.scanBlocks + RESTART_WEIGHT * s.restarts) * weight;
    const limit = (JPEG_COMPONENT_PASSES * maxPixels) / 64;
    if (work > limit) {
      const passes = (work / (maxPixels / 64)).toFixed(0);
      throw new BiometricError(
        'IMAGE_TOO_COSTLY',
        `the JPEG's ${s.scans} scans over ${s.width}x${s.height}${js ? ' (decoded by the JavaScript decoder: CMYK)' : ''} ` +
          `would cost ${passes} passes over a ${maxMp}-megapixel image; at most ${JPEG_COMPONENT_PASSES} are accepted`,
      );
    }
    const ns =
      (NS.jpegPixelBase + NS.jpegPixelPerComponent * s.components.length) * pixels +
      NS.jpegBlock * s.scanBlocks +
      NS.jpegRestart * s.restarts +
      NS.jpegByte * s.entropyBytes;
    return {
      format: 'jpeg',
      width: s.width,
      height: s.height,
      decodeMs: (ns * weight) / 1e6,
      decoder: js ? 'js-jpeg' : 'wasm-jpeg',
      jpeg: s,
    };
  }
  if (bytes.length >= 8 && bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47) {
    const s = readPngStructure(bytes, { checkCrc: opts.checkCrc });
    if (s.width * s.height > maxPixels) throw tooLarge('PNG', s.width, s.height, maxMp);
    const decodeMs =
      (NS.pngInflated * s.inflatedBytes + NS.pngCompressed * s.dataBytes + NS.pngPixel * s.width * s.height) / 1e6;
    return { format: 'png', width: s.width, height: s.height, decodeMs, decoder: 'png', png: s };
  }
  return null;
}
