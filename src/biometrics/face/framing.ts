// How a photo reaches the detector. The detector (Ultra-Light RFB-320) sees the whole image resized to 320x240
// and was trained on scenes where a face is a part of the frame; on a tight crop, where the face fills the
// frame, it finds no face or a box cut by the image's edges, and the landmark and alignment crops built on
// that box miss part of the face. Such a photo is shown to the detector on a larger canvas, its edge pixels
// repeated outwards (the photo's own colours continued, as the crops already continue them), so that the face
// is a part of the frame as the detector knows faces. The box found there is moved back into the photo's
// coordinates, where the landmark and alignment crops are taken as before. Measured on faces-dev and tight
// crops of it against a grey and a mirrored border and other amounts and triggers: docs/extraction.md.
import type { RgbImage } from '../image/raster.js';
import type { Detection } from './detect.js';

/** The photo placed on a canvas: `image` is the canvas, the photo's top-left corner is at (left, top). */
export interface Framing {
  image: RgbImage;
  left: number;
  top: number;
}

/** The photo as it is: no border. */
export const unframed = (img: RgbImage): Framing => ({ image: img, left: 0, top: 0 });

/** The border added to each side of a photo framed `factor` times its size: [left/right, top/bottom]. */
function border(img: RgbImage, factor: number): [number, number] {
  return [Math.round((img.width * (factor - 1)) / 2), Math.round((img.height * (factor - 1)) / 2)];
}

/** Bytes of the canvas `framedWithEdges` makes of a `width` x `height` photo. */
export function framedBytes(width: number, height: number, factor: number): number {
  const [l, t] = border({ width, height, data: new Uint8Array(0) }, factor);
  return (width + 2 * l) * (height + 2 * t) * 3;
}

/**
 * The photo in the middle of a canvas `factor` times its width and height, every pixel outside the photo a copy
 * of the nearest edge pixel. `into` receives the canvas's bytes when given (at least framedBytes of them).
 */
export function framedWithEdges(img: RgbImage, factor: number, into?: Uint8Array): Framing {
  const [left, top] = border(img, factor);
  const W = img.width + 2 * left,
    H = img.height + 2 * top;
  const data = into ? into.subarray(0, W * H * 3) : new Uint8Array(W * H * 3);
  const src = img.data,
    row = img.width * 3;
  for (let y = 0; y < H; y++) {
    const sy = Math.min(img.height - 1, Math.max(0, y - top));
    const line = y * W * 3;
    // The photo's row in the middle, its first and last pixel repeated on either side.
    data.set(src.subarray(sy * row, (sy + 1) * row), line + left * 3);
    for (const [from, to, at] of [
      [line, line + left * 3, sy * row],
      [line + (left + img.width) * 3, line + W * 3, sy * row + row - 3],
    ] as const) {
      for (let d = from; d < to; d += 3) {
        data[d] = src[at]!;
        data[d + 1] = src[at + 1]!;
        data[d + 2] = src[at + 2]!;
      }
    }
  }
  return { image: { width: W, height: H, data }, left, top };
}

/**
 * A detection on the canvas in the photo's coordinates. It may reach past the photo (a face cut by the photo's
 * edge): the landmark crop is taken from that whole box, and `clipped` gives what a client is told.
 */
export function detectionInPhoto(d: Detection, f: Framing): Detection {
  return { x1: d.x1 - f.left, y1: d.y1 - f.top, x2: d.x2 - f.left, y2: d.y2 - f.top, score: d.score };
}

/** The box cut to the photo (as detections on the photo itself always are). */
export function clipped(d: Detection, width: number, height: number): Detection {
  const c = (v: number, max: number) => Math.min(max, Math.max(0, v));
  return { x1: c(d.x1, width), y1: c(d.y1, height), x2: c(d.x2, width), y2: c(d.y2, height), score: d.score };
}

/** Photos whose longer side is under this many pixels are framed before detection (see framingFactor). */
export const FRAMED_BELOW_PX = 300;
/** How much larger than the photo its canvas is, each way. */
const FRAME_FACTOR = 2;

/**
 * How many times larger than the photo the detector's canvas is: FRAME_FACTOR for a photo whose longer side is
 * under FRAMED_BELOW_PX, else 1 (the photo as it is).
 */
export function framingFactor(img: RgbImage): number {
  return Math.max(img.width, img.height) < FRAMED_BELOW_PX ? FRAME_FACTOR : 1;
}
