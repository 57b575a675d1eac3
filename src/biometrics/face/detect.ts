import { resizeArea } from '../image/image.js';
import { type RgbImage } from '../image/raster.js';
import { toPlanar } from '../image/planes.js';
import { scratchU8 } from '../image/scratch.js';

/** A detected face box in source pixels (corner form) with its detector score. */
export interface Detection {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  score: number;
}

export const DETECT_W = 320;
export const DETECT_H = 240;

/** Options of the detector. */
interface DetectOptions {
  /** Minimum face probability (default 0.65). */
  scoreThreshold?: number;
  /** IoU above which a lower-scored box is suppressed (default 0.4). */
  iouThreshold?: number;
  /** Maximum number of faces returned (default 50). */
  maxFaces?: number;
}

/** Input tensor of fr_detect: whole image resized to 320x240, RGB planes, (v-127)/128 (into `into` when given). */
export function detectInput(img: RgbImage, into?: Float32Array): Float32Array {
  if (img.width === 2 * DETECT_W && img.height === 2 * DETECT_H) return halvedInput(img, into);
  // The 320x240 raster is read once, right away: a reused scratch array rather than a new one per image.
  const small = resizeArea(img, DETECT_W, DETECT_H, scratchU8('detector raster', DETECT_W * DETECT_H * 3));
  return toPlanar(small, [127, 127, 127], [128, 128, 128], 'RGB', into);
}

/**
 * The detector input of a 640x480 image, the size of every 4:3 live capture frame (the sidecar scales frames down
 * to 640 px on their longer side): each pixel the rounded mean of a 2x2 block, which is what resizeArea's box filter makes at
 * a factor of exactly two, written straight into the planes with toPlanar's arithmetic, so the tensor is the same
 * to the bit. The general path's two passes (a scratch raster, then the planes) took 3.4 ms of a capture frame's
 * 59 ms of CPU (docs/benchmarks.md, "One frame's analysis, by stage").
 */
function halvedInput(img: RgbImage, into?: Float32Array): Float32Array {
  const n = DETECT_W * DETECT_H;
  const out = into ?? new Float32Array(3 * n);
  const d = img.data;
  const row = img.width * 3;
  const scale = 1 / 128;
  // (sum + 2) >> 2 is Math.round(sum / 4) for sums of bytes (halves rounded up), without the float division.
  for (let y = 0, p = 0; y < DETECT_H; y++) {
    for (let x = 0, q = 2 * y * row; x < DETECT_W; x++, p++, q += 6) {
      const below = q + row;
      out[p] = (((d[q]! + d[q + 3]! + d[below]! + d[below + 3]! + 2) >> 2) - 127) * scale;
      out[n + p] = (((d[q + 1]! + d[q + 4]! + d[below + 1]! + d[below + 4]! + 2) >> 2) - 127) * scale;
      out[2 * n + p] = (((d[q + 2]! + d[q + 5]! + d[below + 2]! + d[below + 5]! + 2) >> 2) - 127) * scale;
    }
  }
  return out;
}

/**
 * Post-processing of fr_detect: keep boxes with score >= threshold, sort by score (descending), greedy
 * non-maximum suppression by IoU (and by containment: a box 80% inside a kept one is dropped). The reference
 * code sorted by the box's bottom edge instead of the score.
 */
export function decodeDetections(
  scores: Float32Array,
  boxes: Float32Array,
  width: number,
  height: number,
  opts: DetectOptions = {},
): Detection[] {
  const thr = opts.scoreThreshold ?? 0.65;
  const iouThr = opts.iouThreshold ?? 0.4;
  const maxFaces = opts.maxFaces ?? 50;
  const n = scores.length / 2;
  const cand: Detection[] = [];
  for (let i = 0; i < n; i++) {
    const s = scores[i * 2 + 1];
    if (s < thr) continue;
    const x1 = Math.max(0, boxes[i * 4] * width),
      y1 = Math.max(0, boxes[i * 4 + 1] * height);
    const x2 = Math.min(width, boxes[i * 4 + 2] * width),
      y2 = Math.min(height, boxes[i * 4 + 3] * height);
    if (x2 - x1 < 1 || y2 - y1 < 1) continue;
    cand.push({ x1, y1, x2, y2, score: s });
  }
  cand.sort((a, b) => b.score - a.score);
  const kept: Detection[] = [];
  for (const c of cand) {
    if (kept.length >= maxFaces) break;
    if (kept.every((k) => iou(k, c) <= iouThr && containment(k, c) <= 0.8)) kept.push(c);
  }
  return kept;
}

/**
 * Share of the smaller box covered by the other. A lower-scored box lying mostly inside a kept one (half a
 * face inside a tight portrait crop) is a duplicate even when its IoU is small.
 */
function containment(
  a: { x1: number; y1: number; x2: number; y2: number },
  b: { x1: number; y1: number; x2: number; y2: number },
): number {
  const w = Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1);
  const h = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1);
  if (w <= 0 || h <= 0) return 0;
  return (w * h) / Math.min((a.x2 - a.x1) * (a.y2 - a.y1), (b.x2 - b.x1) * (b.y2 - b.y1));
}

/** Intersection over union of two corner boxes. */
export function iou(
  a: { x1: number; y1: number; x2: number; y2: number },
  b: { x1: number; y1: number; x2: number; y2: number },
): number {
  const w = Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1);
  const h = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1);
  if (w <= 0 || h <= 0) return 0;
  const inter = w * h;
  return inter / ((a.x2 - a.x1) * (a.y2 - a.y1) + (b.x2 - b.x1) * (b.y2 - b.y1) - inter);
}
