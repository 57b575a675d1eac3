// The chunk structure of a PNG, read without inflating anything: the header, the palette, where the image data
// lies, and how many bytes it must inflate to. Deflate reaches about 1032:1, so what a PNG's data inflates to is
// bounded by its header, never by its size (issue 32: a 64x64 header over 1 MB of data that inflated to 1 GiB).
import { BiometricError } from '../errors.js';
import { crc32 } from '../crc32.js';

/** What the chunks of a PNG say. */
export interface PngStructure {
  width: number;
  height: number;
  /** Bits per sample: 1, 2, 4, 8 or 16. */
  depth: number;
  /** 0 grey, 2 truecolour, 3 indexed, 4 grey + alpha, 6 truecolour + alpha. */
  colourType: number;
  /** Samples per pixel (1 for indexed). */
  channels: number;
  interlaced: boolean;
  /** The palette's RGB triples (indexed images), with its alpha values from tRNS. */
  palette?: Uint8Array;
  paletteAlpha?: Uint8Array;
  /** Where each IDAT chunk's data lies, in order. */
  data: { start: number; end: number }[];
  /** Bytes of compressed image data (the IDAT chunks together). */
  dataBytes: number;
  /** Bytes the image data inflates to: each row of each pass with its filter byte. Exactly this, no more. */
  inflatedBytes: number;
  chunks: number;
}

/** Chunks a PNG may hold: a writer splits its data into chunks of 8-64 KB, so a large photo has a few thousand. */
const MAX_PNG_CHUNKS = 65_536;

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
const DEPTHS: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

/** The seven passes of Adam7 interlacing: first column, first row, column step, row step. */
export const ADAM7: readonly (readonly [number, number, number, number])[] = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
];

const invalid = (why: string) => new BiometricError('INVALID_IMAGE', `corrupt or truncated PNG: ${why}`);

const u32 = (b: Uint8Array, at: number) => ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
const typeOf = (b: Uint8Array, at: number) => String.fromCharCode(b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!);

/** Bytes of one row of `width` pixels, without its filter byte. */
export const rowBytes = (width: number, channels: number, depth: number) => Math.ceil((width * channels * depth) / 8);

/**
 * Reads the chunks of a PNG (the bytes start with its signature) up to IEND. Ancillary chunks (text, ICC
 * profiles, animation frames ...) are skipped unread: nothing here or in the decoder inflates them. With
 * `checkCrc`, the critical chunks' CRCs are checked (one pass over their bytes).
 *
 * @throws BiometricError INVALID_IMAGE for a broken structure (truncated, IHDR not first or malformed, IDAT
 *   chunks apart, a missing palette, an unknown critical chunk), IMAGE_TOO_COSTLY past {@link MAX_PNG_CHUNKS}.
 */
export function readPngStructure(b: Uint8Array, { checkCrc = false }: { checkCrc?: boolean } = {}): PngStructure {
  let header: Omit<PngStructure, 'data' | 'dataBytes' | 'chunks' | 'palette' | 'paletteAlpha'> | undefined;
  let palette: Uint8Array | undefined;
  let paletteAlpha: Uint8Array | undefined;
  const data: { start: number; end: number }[] = [];
  let dataBytes = 0;
  let dataEnded = false;
  let chunks = 0;
  for (let at = 8; ; ) {
    if (at + 12 > b.length) throw invalid('no IEND chunk');
    const length = u32(b, at);
    const type = typeOf(b, at + 4);
    const start = at + 8;
    const end = start + length;
    if (length > 0x7fffffff || end + 4 > b.length) throw invalid(`truncated ${JSON.stringify(type)} chunk`);
    if (++chunks > MAX_PNG_CHUNKS)
      throw new BiometricError('IMAGE_TOO_COSTLY', `the PNG holds more than ${MAX_PNG_CHUNKS} chunks`);
    const critical = (b[at + 4]! & 0x20) === 0;
    if (checkCrc && critical && crc32(b.subarray(at + 4, end)) !== u32(b, end))
      throw invalid(`CRC mismatch in the ${type} chunk`);
    if (!header && type !== 'IHDR') throw invalid('IHDR is not the first chunk');
    if (type !== 'IDAT' && data.length) dataEnded = true;
    if (type === 'IHDR') {
      if (header) throw invalid('two IHDR chunks');
      header = readHeader(b, start, length);
    } else if (type === 'PLTE') {
      if (length % 3 !== 0 || length === 0 || length > 768) throw invalid('a palette that is not 1 to 256 colours');
      if (data.length) throw invalid('PLTE after the image data');
      palette = b.subarray(start, end);
    } else if (type === 'tRNS') {
      if (header!.colourType === 3) paletteAlpha = b.subarray(start, end);
    } else if (type === 'IDAT') {
      if (dataEnded) throw invalid('IDAT chunks that are not consecutive');
      data.push({ start, end });
      dataBytes += length;
    } else if (type === 'IEND') {
      break;
    } else if (critical) {
      throw invalid(`unknown critical chunk ${JSON.stringify(type)}`);
    }
    at = end + 4;
  }
  if (!header) throw invalid('no IHDR chunk');
  if (header.colourType === 3 && !palette) throw invalid('an indexed image without a palette');
  if (!data.length) throw invalid('no image data');
  // Deflate stores what it cannot compress at 5 bytes per 64 KB block: data far longer than the image itself
  // holds more than the image (a bomb), and is refused without inflating any of it.
  if (dataBytes > 2 * header.inflatedBytes + 65_536)
    throw invalid(
      `${dataBytes} bytes of image data for a ${header.width}x${header.height} image of ${header.inflatedBytes} bytes`,
    );
  return { ...header, palette, paletteAlpha, data, dataBytes, chunks };
}

function readHeader(b: Uint8Array, start: number, length: number) {
  if (length !== 13) throw invalid('IHDR of the wrong length');
  const width = u32(b, start);
  const height = u32(b, start + 4);
  const depth = b[start + 8]!;
  const colourType = b[start + 9]!;
  if (width === 0 || height === 0 || width > 0x7fffffff || height > 0x7fffffff) throw invalid('a size of zero');
  const channels = CHANNELS[colourType];
  if (channels === undefined || !DEPTHS[colourType]!.includes(depth))
    throw invalid(`colour type ${colourType} at ${depth} bits is not a PNG format`);
  if (b[start + 10] !== 0 || b[start + 11] !== 0) throw invalid('unknown compression or filter method');
  const interlace = b[start + 12]!;
  if (interlace > 1) throw invalid('unknown interlace method');
  const interlaced = interlace === 1;
  let inflatedBytes = 0;
  if (!interlaced) inflatedBytes = height * (rowBytes(width, channels, depth) + 1);
  else
    for (const [x0, y0, dx, dy] of ADAM7) {
      const w = Math.ceil((width - x0) / dx);
      const h = Math.ceil((height - y0) / dy);
      if (w > 0 && h > 0) inflatedBytes += h * (rowBytes(w, channels, depth) + 1);
    }
  return { width, height, depth, colourType, channels, interlaced, inflatedBytes };
}
