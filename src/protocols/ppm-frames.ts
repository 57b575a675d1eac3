// The raw picture format between the sidecar's video decoders and the API (issue 33): binary PPM (P6), as ffmpeg's
// `-c:v ppm -pix_fmt rgb24` writes it, "P6\n<width> <height>\n255\n" and the rgb24 pixels. Each frame says its
// own size, so a camera that changes resolution mid-stream (a browser adapting to its bandwidth) needs no
// renegotiation; the pixels are those the pool analyses, with no JPEG encoded by ffmpeg and decoded again by the
// pool. Shared by the sidecar (cutting ffmpeg's stream) and the API (reading the frames it is handed).
import type { RgbImage } from '../biometrics/image/raster.js';

/** The longest header accepted: "P6" and three numbers of at most 5 digits with their separators. */
const MAX_HEADER = 32;
/** The largest side a decoder hands over (rtp-decoder.ts scales to 640) with room for a changed limit. */
const MAX_SIDE = 4096;

const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/**
 * The header of the PPM frame at the start of `bytes`: its size and where the pixels start; null when
 * `bytes` does not hold the whole header yet. Throws on anything but the 8-bit P6 ffmpeg writes (no comments).
 */
export function ppmHeader(bytes: Uint8Array): { width: number; height: number; headerLength: number } | null {
  if (bytes.length >= 2 && (bytes[0] !== 0x50 || bytes[1] !== 0x36)) throw new Error('not a binary PPM (P6) frame');
  const numbers: number[] = [];
  let i = 2;
  while (numbers.length < 3) {
    if (i >= bytes.length) return bytes.length >= MAX_HEADER ? fail() : null;
    if (!isSpace(bytes[i]!)) return fail();
    i++; // the one separator before each number (ffmpeg writes one)
    let value = 0;
    let digits = 0;
    for (; i < bytes.length && bytes[i]! >= 0x30 && bytes[i]! <= 0x39; i++, digits++)
      value = value * 10 + bytes[i]! - 0x30;
    if (i >= bytes.length) return bytes.length >= MAX_HEADER ? fail() : null;
    if (digits === 0 || digits > 5) return fail();
    numbers.push(value);
  }
  // One whitespace byte ends the header; the pixels follow.
  if (i >= bytes.length) return null;
  if (!isSpace(bytes[i]!)) return fail();
  const [width, height, maxval] = numbers as [number, number, number];
  if (maxval !== 255 || width < 1 || height < 1 || width > MAX_SIDE || height > MAX_SIDE) return fail();
  return { width, height, headerLength: i + 1 };
}

function fail(): never {
  throw new Error('malformed PPM frame header');
}

/**
 * The picture of one whole PPM frame, its pixels a view of `bytes` (no copy). Throws when the frame is not
 * exactly its header and width x height x 3 bytes.
 */
export function readPpmFrame(bytes: Uint8Array): RgbImage {
  const header = ppmHeader(bytes);
  if (!header) throw new Error('truncated PPM frame header');
  const { width, height, headerLength } = header;
  if (bytes.length !== headerLength + width * height * 3)
    throw new Error(`a ${width}x${height} PPM frame of ${bytes.length} bytes`);
  return { width, height, data: bytes.subarray(headerLength) };
}
