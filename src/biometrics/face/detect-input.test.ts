import { describe, expect, it } from 'vitest';
import { resizeArea } from '../image/image.js';
import { toPlanar } from '../image/planes.js';
import type { RgbImage } from '../image/raster.js';
import { DETECT_H, DETECT_W, detectInput } from './detect.js';

/** A W x H raster of pseudo-random bytes (a fixed seed), with runs of 0 and 255 and of blocks whose mean ends in .5. */
function raster(width: number, height: number, seed: number): RgbImage {
  const data = new Uint8Array(width * height * 3);
  let s = seed;
  for (let i = 0; i < data.length; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    data[i] = s >>> 24;
  }
  // Saturated corners and a block of 1, 2, 1, 2 (mean 1.5: the rounding's tie) at the origin of each plane.
  data.fill(0, 0, 3 * width);
  data.fill(255, data.length - 3 * width);
  for (const [i, v] of [
    [0, 1],
    [3, 2],
    [3 * width, 1],
    [3 * width + 3, 2],
  ] as const)
    data[i] = v;
  return { width, height, data };
}

/** The detector input as the general path makes it: resizeArea's box filter, then the planes. */
const general = (img: RgbImage) =>
  toPlanar(resizeArea(img, DETECT_W, DETECT_H), [127, 127, 127], [128, 128, 128], 'RGB');

describe('detectInput', () => {
  it("gives a 640x480 frame (a capture's) the general path's tensor, bit for bit", () => {
    for (const seed of [1, 2, 3]) {
      const img = raster(640, 480, seed);
      const fast = detectInput(img);
      const expected = general(img);
      expect(fast.length).toBe(3 * DETECT_W * DETECT_H);
      expect(Buffer.from(fast.buffer).equals(Buffer.from(expected.buffer))).toBe(true);
      // Into a lent array too, as the pipeline asks.
      const into = new Float32Array(3 * DETECT_W * DETECT_H).fill(7);
      expect(Buffer.from(detectInput(img, into).buffer).equals(Buffer.from(expected.buffer))).toBe(true);
    }
  });

  it('other sizes keep the general path', () => {
    for (const [w, h] of [
      [1280, 960],
      [640, 360],
      [320, 240],
    ] as const) {
      const img = raster(w, h, 9);
      expect(Buffer.from(detectInput(img).buffer).equals(Buffer.from(general(img).buffer)), `${w}x${h}`).toBe(true);
    }
  });
});
