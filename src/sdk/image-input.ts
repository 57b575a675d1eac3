import { encodePng } from '../biometrics/image/encode.js';
import { FaceSdkError } from './errors.js';

/**
 * What `extractTemplate` accepts: encoded JPEG/PNG bytes (as bytes, an ArrayBuffer or a Blob/File), or pixels
 * the browser already holds (ImageData, an ImageBitmap, a canvas, an <img>, a <video> frame, a VideoFrame).
 */
export type ImageInput = Uint8Array | ArrayBuffer | Blob | ImageData | CanvasImageSource;

/**
 * Turns any `ImageInput` into JPEG or PNG bytes, because the shared pipeline (`analyseImage`) starts from an
 * encoded file: that keeps the device on exactly the service's code path. Encoded inputs pass through
 * untouched (EXIF orientation is then applied by the pipeline, as on the service). Pixels are written as a
 * lossless PNG (alpha over white, like the decoder does), so nothing is lost on the way.
 */
export async function toEncodedImage(input: ImageInput): Promise<Uint8Array> {
  if (input instanceof Uint8Array) return input;
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (typeof Blob !== 'undefined' && input instanceof Blob) return new Uint8Array(await input.arrayBuffer());
  if (typeof ImageData !== 'undefined' && input instanceof ImageData)
    return rgbaToPng(input.width, input.height, input.data);
  const { width, height } = sourceSize(input as CanvasImageSource);
  if (!width || !height)
    throw new FaceSdkError(
      'UNSUPPORTED_INPUT',
      'the image source has no pixels yet (not loaded, or a video without a frame)',
    );
  const ctx = canvas2d(width, height);
  ctx.drawImage(input as CanvasImageSource, 0, 0, width, height);
  return rgbaToPng(width, height, ctx.getImageData(0, 0, width, height).data);
}

/** Intrinsic size of a drawable source (not its CSS size). */
function sourceSize(src: CanvasImageSource): { width: number; height: number } {
  const s = src as unknown as Record<string, unknown>;
  if (typeof s.videoWidth === 'number') return { width: s.videoWidth, height: s.videoHeight as number };
  if (typeof s.naturalWidth === 'number') return { width: s.naturalWidth, height: s.naturalHeight as number };
  if (typeof s.displayWidth === 'number') return { width: s.displayWidth, height: s.displayHeight as number };
  if (typeof s.width === 'number') return { width: s.width, height: s.height as number };
  throw new FaceSdkError('UNSUPPORTED_INPUT', 'send JPEG/PNG bytes, a Blob, ImageData or a drawable image source');
}

/** A 2D context to read pixels from: OffscreenCanvas where it exists (also in workers), else a DOM canvas. */
function canvas2d(width: number, height: number): OffscreenCanvasRenderingContext2D | CanvasRenderingContext2D {
  const canvas =
    typeof OffscreenCanvas !== 'undefined'
      ? new OffscreenCanvas(width, height)
      : Object.assign(document.createElement('canvas'), { width, height });
  const ctx = canvas.getContext('2d', { willReadFrequently: true }) as
    | OffscreenCanvasRenderingContext2D
    | CanvasRenderingContext2D
    | null;
  if (!ctx) throw new FaceSdkError('UNSUPPORTED_INPUT', 'no 2D canvas context available to read the pixels');
  return ctx;
}

/** RGBA pixels -> RGB composited over white -> PNG bytes. */
function rgbaToPng(width: number, height: number, rgba: Uint8ClampedArray): Uint8Array {
  const rgb = new Uint8Array(width * height * 3);
  for (let p = 0, q = 0; q < rgba.length; p += 3, q += 4) {
    const a = rgba[q + 3];
    if (a === 255) {
      rgb[p] = rgba[q];
      rgb[p + 1] = rgba[q + 1];
      rgb[p + 2] = rgba[q + 2];
    } else {
      for (let c = 0; c < 3; c++) rgb[p + c] = Math.round((rgba[q + c] * a + 255 * (255 - a)) / 255);
    }
  }
  return encodePng({ width, height, data: rgb });
}
