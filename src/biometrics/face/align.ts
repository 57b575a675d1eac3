import type { Affine } from '../image/raster.js';

/** 2-D point. */
export type Point = [number, number];

/** ArcFace reference positions of (left eye, right eye, nose tip, left mouth corner, right mouth corner) in 112x112. */
const ARCFACE_REF_112: readonly Point[] = [
  [38.2946, 51.6963],
  [73.5318, 51.5014],
  [56.0252, 71.7366],
  [41.5493, 92.3655],
  [70.7299, 92.2041],
];

/**
 * The 5 alignment points from 68 iBUG landmarks (flat x,y array): eye centres (mean of the 4 eyelid points),
 * nose tip (30), mouth corners (mean of outer 48/54 and inner 60/64 corners).
 */
function fivePoints(lm: ArrayLike<number>): Point[] {
  const p = (i: number): Point => [lm[i * 2], lm[i * 2 + 1]];
  const mean = (...ids: number[]): Point => {
    let x = 0,
      y = 0;
    for (const i of ids) {
      x += lm[i * 2];
      y += lm[i * 2 + 1];
    }
    return [x / ids.length, y / ids.length];
  };
  return [mean(37, 38, 40, 41), mean(43, 44, 46, 47), p(30), mean(48, 60), mean(54, 64)];
}

/**
 * Least-squares similarity transform (rotation, uniform scale, translation; Umeyama 1991) mapping `src`
 * onto `dst`. Returns [a, b, tx, c, d, ty] with dst = [[a b],[c d]] * src + t, where c = -b, d = a.
 */
export function similarityTransform(src: readonly Point[], dst: readonly Point[]): Affine {
  const n = src.length;
  let msx = 0,
    msy = 0,
    mdx = 0,
    mdy = 0;
  for (let i = 0; i < n; i++) {
    msx += src[i][0];
    msy += src[i][1];
    mdx += dst[i][0];
    mdy += dst[i][1];
  }
  msx /= n;
  msy /= n;
  mdx /= n;
  mdy /= n;
  let sxx = 0,
    sxy = 0,
    varS = 0;
  for (let i = 0; i < n; i++) {
    const ax = src[i][0] - msx,
      ay = src[i][1] - msy;
    const bx = dst[i][0] - mdx,
      by = dst[i][1] - mdy;
    sxx += ax * bx + ay * by; // sum of dot products
    sxy += ax * by - ay * bx; // sum of cross products
    varS += ax * ax + ay * ay;
  }
  // For 2-D, the optimal rotation angle is atan2(sum cross, sum dot), scale = |(dot, cross)| / var(src).
  const a = sxx / varS,
    b = sxy / varS; // a = s*cos, b = s*sin
  const tx = mdx - (a * msx - b * msy);
  const ty = mdy - (b * msx + a * msy);
  return [a, -b, tx, b, a, ty];
}

/** Inverse of an affine map [a, b, c, d, e, f]. */
export function invertAffine(m: Affine): Affine {
  const [a, b, c, d, e, f] = m;
  const det = a * e - b * d;
  const ia = e / det,
    ib = -b / det,
    id = -d / det,
    ie = a / det;
  return [ia, ib, -(ia * c + ib * f), id, ie, -(id * c + ie * f)];
}

/**
 * The map from a 112x112 aligned crop back to source pixels, for `warpAffine`. `size` other than 112
 * scales the reference (e.g. 224 for a larger token image).
 */
export function alignmentMap(
  lm68: ArrayLike<number>,
  size = 112,
  ref: readonly Point[] = ARCFACE_REF_112,
  offset: Point = [0, 0],
): Affine {
  const k = size / 112;
  const dst = ref.map(([x, y]) => [x * k + offset[0], y * k + offset[1]] as Point);
  return invertAffine(similarityTransform(fivePoints(lm68), dst));
}

/** 68 landmarks as the pipeline holds them, from `FaceAnalysis.landmarks` (the same float32 values). */
export function landmarksOf(points: readonly (readonly [number, number])[]): Float32Array {
  const lm = new Float32Array(136);
  for (let i = 0; i < 68; i++) {
    lm[i * 2] = points[i]![0];
    lm[i * 2 + 1] = points[i]![1];
  }
  return lm;
}

/** Eye centres from 68 landmarks (image left first). */
export function eyeCentres(lm: Float32Array): [Point, Point] {
  const c = (ids: number[]): Point => [
    ids.reduce((a, i) => a + lm[i * 2], 0) / ids.length,
    ids.reduce((a, i) => a + lm[i * 2 + 1], 0) / ids.length,
  ];
  return [c([37, 38, 40, 41]), c([43, 44, 46, 47])];
}
