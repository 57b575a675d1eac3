import jpeg from 'jpeg-js';
import encodeMozjpeg, { init as initMozjpeg } from '@jsquash/jpeg/encode.js';
import type { RgbImage } from './raster.js';

/**
 * The quality a capture's kept frame is stored at: the frame is the operation's probe or the enrolment's sample,
 * analysed again by a re-extraction, so close to what the camera gave (the decoders' MJPEG frames were
 * ffmpeg's `-q:v 2`, about as fine); mozjpeg's 90 keeps a 640x480 face photo at about 60-70 KB.
 */
export const STORED_FRAME_QUALITY = 90;

let mozjpegModule: WebAssembly.Module | null = null;
/** Its instance, made at the first frame encoded: most workers never encode one. */
let mozjpeg: Promise<void> | null = null;
/** `init` takes the compiled module and the Emscripten options (its declared type names only the options). */
const startMozjpeg = initMozjpeg as unknown as (module: WebAssembly.Module, options: object) => Promise<void>;

/**
 * Enables the mozjpeg encoder (`@jsquash/jpeg`'s `mozjpeg_enc.wasm`, compiled by the caller as each runtime
 * loads wasm its own way), about twice as fast as the pure JS fallback (jpeg-js) and a third smaller.
 */
export function configureJpegEncoder(module: WebAssembly.Module): void {
  mozjpegModule = module;
}

/** The RGBA pixels the encoders take (alpha opaque). */
function rgba({ width, height, data }: RgbImage): Uint8ClampedArray {
  const n = width * height;
  const out = new Uint8ClampedArray(n * 4);
  for (let p = 0, q = 0; p < n * 3; p += 3, q += 4) {
    out[q] = data[p]!;
    out[q + 1] = data[p + 1]!;
    out[q + 2] = data[p + 2]!;
    out[q + 3] = 255;
  }
  return out;
}

/**
 * A baseline-decodable JPEG of an RGB raster, at {@link STORED_FRAME_QUALITY}: how a live capture stores the one
 * frame it keeps (its frames arrive as raw pixels, src/protocols/ppm-frames.ts, and only the kept one is encoded).
 */
export async function encodeJpeg(img: RgbImage, quality = STORED_FRAME_QUALITY): Promise<Uint8Array> {
  const pixels = rgba(img);
  if (mozjpegModule) {
    await (mozjpeg ??= startMozjpeg(mozjpegModule, { print: () => undefined, printErr: () => undefined }));
    const image = { width: img.width, height: img.height, data: pixels, colorSpace: 'srgb' } as ImageData;
    // Sequential, not mozjpeg's default progressive: a sixth less CPU here, and decoded again (re-extraction,
    // the adjudicator's view) at a sequential JPEG's cost.
    return new Uint8Array(await encodeMozjpeg(image, { quality, baseline: true, progressive: false }));
  }
  const out = jpeg.encode(
    { width: img.width, height: img.height, data: pixels as unknown as Parameters<typeof jpeg.encode>[0]['data'] },
    quality,
  );
  return new Uint8Array(out.data.buffer, out.data.byteOffset, out.data.length);
}
