// The raster and the affine map every image step shares: a leaf, so image.ts and warp.ts both build on it.

/** An 8-bit RGB raster, row-major, interleaved (r,g,b), no padding. */
export interface RgbImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/**
 * A 2x3 affine map from destination pixel (u, v) to source pixel (x, y):
 * x = m[0]*u + m[1]*v + m[2], y = m[3]*u + m[4]*v + m[5]. Pixel centres are at integer coordinates.
 */
export type Affine = [number, number, number, number, number, number];
