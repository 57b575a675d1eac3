import { describe, expect, it } from 'vitest';
import { invertAffine, similarityTransform, type Point } from './align.js';
import type { Affine } from '../image/raster.js';
import { decodeDetections, iou } from './detect.js';

/** An affine map applied to a point (the service warps whole images, never single points). */
function applyAffine(m: Affine, p: Point): Point {
  return [m[0] * p[0] + m[1] * p[1] + m[2], m[3] * p[0] + m[4] * p[1] + m[5]];
}

describe('5-point similarity alignment', () => {
  it('recovers a known rotation, scale and translation exactly', () => {
    const src: Point[] = [
      [10, 20],
      [50, 18],
      [30, 40],
      [15, 60],
      [45, 61],
    ];
    const ang = 0.3,
      s = 1.7,
      tx = 5,
      ty = -8;
    const dst = src.map(
      ([x, y]) =>
        [s * (Math.cos(ang) * x - Math.sin(ang) * y) + tx, s * (Math.sin(ang) * x + Math.cos(ang) * y) + ty] as Point,
    );
    const m = similarityTransform(src, dst);
    src.forEach((p, i) => {
      const q = applyAffine(m, p);
      expect(q[0]).toBeCloseTo(dst[i][0], 9);
      expect(q[1]).toBeCloseTo(dst[i][1], 9);
    });
    const back = applyAffine(invertAffine(m), dst[2]);
    expect(back[0]).toBeCloseTo(src[2][0], 9);
  });
});

describe('detector post-processing', () => {
  it('keeps boxes above the threshold, sorted by score, suppressing overlaps by IoU', () => {
    // Three candidates: two overlapping boxes (0.9 lower than 0.95), one separate box, one below threshold.
    const boxes = new Float32Array([
      0.1,
      0.1,
      0.3,
      0.3, // score 0.9, overlapped by the next (bottom edge lower: the reference NMS would keep it)
      0.11,
      0.1,
      0.31,
      0.29, // score 0.95
      0.6,
      0.6,
      0.8,
      0.8, // score 0.7
      0.4,
      0.4,
      0.5,
      0.5, // score 0.3
    ]);
    const scores = new Float32Array([0.1, 0.9, 0.05, 0.95, 0.3, 0.7, 0.7, 0.3]);
    const d = decodeDetections(scores, boxes, 100, 100, { scoreThreshold: 0.65, iouThreshold: 0.4 });
    expect(d.map((x) => x.score.toFixed(2))).toEqual(['0.95', '0.70']);
    expect(d[0].x1).toBeCloseTo(11, 4);
    expect(iou({ x1: 0, y1: 0, x2: 2, y2: 2 }, { x1: 1, y1: 0, x2: 3, y2: 2 })).toBeCloseTo(1 / 3, 9);
  });
});
