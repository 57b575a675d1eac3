import { describe, expect, it } from 'vitest';
import type { RgbImage } from '../image/raster.js';
import { clipped, detectionInPhoto, framedBytes, framedWithEdges, framingFactor, FRAMED_BELOW_PX } from './framing.js';

/** A w x h photo whose pixel (x, y) is (x, y, 7). */
function photo(w: number, h: number): RgbImage {
  const data = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) data.set([x, y, 7], (y * w + x) * 3);
  return { width: w, height: h, data };
}
const pixel = (img: RgbImage, x: number, y: number) =>
  Array.from(img.data.subarray((y * img.width + x) * 3, (y * img.width + x) * 3 + 3));

describe('framing a photo for the detector', () => {
  it('frames only photos whose longer side is under the bound, at twice their size', () => {
    expect(framingFactor(photo(FRAMED_BELOW_PX - 1, 10))).toBe(2);
    expect(framingFactor(photo(10, FRAMED_BELOW_PX - 1))).toBe(2);
    expect(framingFactor(photo(FRAMED_BELOW_PX, 10))).toBe(1);
    expect(framingFactor(photo(1300, 867))).toBe(1);
  });

  it('puts the photo in the middle and repeats its edge pixels outwards', () => {
    const img = photo(5, 3);
    const f = framedWithEdges(img, 2);
    expect([f.image.width, f.image.height, f.left, f.top]).toEqual([5 + 2 * 3, 3 + 2 * 2, 3, 2]);
    expect(f.image.data.length).toBe(framedBytes(5, 3, 2));
    for (let y = 0; y < 3; y++) for (let x = 0; x < 5; x++) expect(pixel(f.image, x + 3, y + 2)).toEqual([x, y, 7]);
    expect(pixel(f.image, 0, 0)).toEqual([0, 0, 7]); // the top-left corner pixel
    expect(pixel(f.image, 10, 6)).toEqual([4, 2, 7]); // the bottom-right one
    expect(pixel(f.image, 0, 3)).toEqual([0, 1, 7]); // left of row 1
    expect(pixel(f.image, 5, 0)).toEqual([2, 0, 7]); // above column 2
  });

  it('writes into a lent array when given one, whatever it held', () => {
    const into = new Uint8Array(framedBytes(4, 4, 2) + 9).fill(255);
    const f = framedWithEdges(photo(4, 4), 2, into);
    expect(f.image.data.buffer).toBe(into.buffer);
    expect(f.image.data.length).toBe(framedBytes(4, 4, 2));
    expect(f.image.data.every((v) => v !== 255)).toBe(true);
    expect(f.image.data).toEqual(framedWithEdges(photo(4, 4), 2).image.data);
  });

  it('moves a box found on the canvas back into the photo, cut to it for clients', () => {
    const f = framedWithEdges(photo(100, 80), 2);
    const onCanvas = { x1: 40, y1: 30, x2: 160, y2: 130, score: 0.9 };
    const whole = detectionInPhoto(onCanvas, f);
    expect(whole).toEqual({ x1: -10, y1: -10, x2: 110, y2: 90, score: 0.9 });
    expect(clipped(whole, 100, 80)).toEqual({ x1: 0, y1: 0, x2: 100, y2: 80, score: 0.9 });
    expect(clipped({ x1: 10, y1: 5, x2: 50, y2: 60, score: 1 }, 100, 80)).toEqual({
      x1: 10,
      y1: 5,
      x2: 50,
      y2: 60,
      score: 1,
    });
  });
});
