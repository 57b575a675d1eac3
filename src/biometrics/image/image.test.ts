import { expect, it } from 'vitest';
import { cropResize, resizeArea } from './image.js';
import { type Affine, type RgbImage } from './raster.js';
import { warpAffine } from './warp.js';

/** The sampling rule of `warpAffine` written plainly, one sample at a time: the reference the fast paths must equal. */
function reference(
  img: RgbImage,
  m: Affine,
  ow: number,
  oh: number,
  fill?: readonly [number, number, number],
): Uint8Array {
  const { width: W, height: H, data: src } = img;
  const scale = Math.max(Math.hypot(m[0], m[3]), Math.hypot(m[1], m[4]));
  const k = scale > 1.5 ? Math.min(4, Math.ceil(scale)) : 1;
  const out = new Uint8Array(ow * oh * 3);
  for (let v = 0; v < oh; v++) {
    for (let u = 0; u < ow; u++) {
      const acc = [0, 0, 0];
      for (let j = 0; j < k; j++) {
        const vv = v + ((j + 0.5) / k - 0.5);
        for (let i = 0; i < k; i++) {
          const uu = u + ((i + 0.5) / k - 0.5);
          const sx = m[0] * uu + m[1] * vv + m[2],
            sy = m[3] * uu + m[4] * vv + m[5];
          if (fill && (sx < -0.5 || sy < -0.5 || sx > W - 0.5 || sy > H - 0.5)) {
            for (let c = 0; c < 3; c++) acc[c]! += fill[c]!;
            continue;
          }
          const x = Math.min(W - 1, Math.max(0, m[0] * uu + m[1] * vv + m[2]));
          const y = Math.min(H - 1, Math.max(0, m[3] * uu + m[4] * vv + m[5]));
          const x0 = Math.floor(x),
            y0 = Math.floor(y),
            fx = x - x0,
            fy = y - y0;
          const x1 = Math.min(W - 1, x0 + 1),
            y1 = Math.min(H - 1, y0 + 1);
          for (let c = 0; c < 3; c++) {
            acc[c]! +=
              src[(y0 * W + x0) * 3 + c]! * ((1 - fx) * (1 - fy)) +
              src[(y0 * W + x1) * 3 + c]! * (fx * (1 - fy)) +
              src[(y1 * W + x0) * 3 + c]! * ((1 - fx) * fy) +
              src[(y1 * W + x1) * 3 + c]! * (fx * fy);
          }
        }
      }
      for (let c = 0; c < 3; c++) out[(v * ow + u) * 3 + c] = Math.round(acc[c]! / (k * k));
    }
  }
  return out;
}

function noise(width: number, height: number, seed: number): RgbImage {
  const data = new Uint8Array(width * height * 3);
  let s = seed;
  for (let i = 0; i < data.length; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    data[i] = (s >>> 16) & 255;
  }
  return { width, height, data };
}

/** Bytes where `got` and `want` differ, and the largest difference. */
function differences(got: Uint8Array, want: Uint8Array) {
  let count = 0,
    largest = 0;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i]! - want[i]!);
    if (d) count++;
    largest = Math.max(largest, d);
  }
  return { count, largest };
}

it('crops (no rotation) equal the plain rule, inside, across the edges and at every supersampling', () => {
  let count = 0,
    bytes = 0;
  for (const seed of [7, 8, 9]) {
    const img = noise(97, 61, seed);
    const crops: [number, number, number, number, number, number][] = [
      [10, 5, 40, 40, 40, 40], // 1:1
      [0, 0, 97, 61, 24, 24], // whole image, shrink 4x (k = 4)
      [-20, -15, 60, 60, 32, 32], // past the top-left corner
      [50.3, 20.7, 80.1, 70.2, 37, 29], // fractional, past the bottom-right, k = 3
      [30, 30, 9, 9, 40, 40], // enlargement (k = 1)
      [3, 2, 90, 58, 15, 11], // shrink 6x (k stays 4, wider windows)
    ];
    for (const [x, y, w, h, ow, oh] of crops) {
      const got = cropResize(img, x, y, w, h, ow, oh);
      const sx = w / ow,
        sy = h / oh;
      const diff = differences(got.data, reference(img, [sx, 0, x + (sx - 1) / 2, 0, sy, y + (sy - 1) / 2], ow, oh));
      // The separable sum rounds differently only for a value within about 1e-12 of .5: a byte off by one.
      expect(diff.largest, `${x},${y} ${w}x${h} -> ${ow}x${oh}`).toBeLessThanOrEqual(1);
      count += diff.count;
      bytes += got.data.length;
    }
  }
  expect(count / bytes).toBeLessThan(1e-3);
});

it('rotated maps sample exactly as the plain rule', () => {
  const img = noise(80, 90, 3);
  for (const [angle, scale] of [
    [0.3, 1],
    [-0.7, 2.2],
    [1.2, 3.6],
  ] as const) {
    const c = Math.cos(angle) * scale,
      s = Math.sin(angle) * scale;
    const m: Affine = [c, -s, 40, s, c, 20];
    expect(Array.from(warpAffine(img, m, 30, 25).data), `angle ${angle} scale ${scale}`).toEqual(
      Array.from(reference(img, m, 30, 25)),
    );
  }
});

it('a fill colour pads what falls past the image instead of repeating its edge, rotated or not, and changes nothing inside', () => {
  const img = noise(60, 40, 5);
  const grey = [128, 128, 128] as const;
  const maps: Affine[] = [
    [1, 0, -30, 0, 1, -20], // axis-aligned, past the top-left corner (the fast path is not taken with a fill)
    [Math.cos(0.4) * 2.2, -Math.sin(0.4) * 2.2, 10, Math.sin(0.4) * 2.2, Math.cos(0.4) * 2.2, -30], // rotated, shrinking (k = 3)
  ];
  for (const m of maps) {
    const got = warpAffine(img, m, 50, 60, grey);
    expect(Array.from(got.data)).toEqual(Array.from(reference(img, m, 50, 60, grey)));
    // The corner maps far outside: it is the fill, where the edge rule would have repeated a border pixel.
    expect(Array.from(got.data.slice(0, 3))).toEqual([128, 128, 128]);
    expect(Array.from(warpAffine(img, m, 50, 60).data.slice(0, 3))).not.toEqual([128, 128, 128]);
  }
  // Entirely inside, the fill changes nothing.
  const inside: Affine = [0.5, 0.1, 20, -0.1, 0.5, 15];
  expect(Array.from(warpAffine(img, inside, 20, 20, grey).data)).toEqual(
    Array.from(warpAffine(img, inside, 20, 20).data),
  );
});

/** The area rule of `resizeArea` written plainly: each output pixel is the rounded mean of its source span. */
function areaReference(img: RgbImage, ow: number, oh: number): Uint8Array {
  const { width: W, height: H, data: src } = img;
  const sx = W / ow,
    sy = H / oh;
  const span = (t: number, s: number, max: number) => {
    const a = Math.floor(t * s);
    return [a, Math.max(a + 1, Math.min(max, Math.floor((t + 1) * s)))] as const;
  };
  const out = new Uint8Array(ow * oh * 3);
  for (let y = 0; y < oh; y++) {
    const [y0, y1] = span(y, sy, H);
    for (let x = 0; x < ow; x++) {
      const [x0, x1] = span(x, sx, W);
      for (let c = 0; c < 3; c++) {
        let sum = 0;
        for (let yy = y0; yy < y1; yy++) for (let xx = x0; xx < x1; xx++) sum += src[(yy * W + xx) * 3 + c]!;
        out[(y * ow + x) * 3 + c] = Math.round(sum / ((y1 - y0) * (x1 - x0)));
      }
    }
  }
  return out;
}

it('resizeArea equals the plain area rule, byte for byte, shrinking both ways or only one', () => {
  const cases: [number, number, number, number][] = [
    [512, 512, 320, 240], // the detector's input from a square photo
    [97, 61, 40, 30],
    [1000, 700, 320, 240],
    [61, 97, 30, 150], // narrower, taller: columns shrink, rows grow
    [97, 61, 150, 30], // wider, shorter: columns grow (the general path), rows shrink
  ];
  for (const [w, h, ow, oh] of cases) {
    const img = noise(w, h, w + h);
    expect(Buffer.from(resizeArea(img, ow, oh).data).equals(Buffer.from(areaReference(img, ow, oh)))).toBe(true);
  }
});
