import { createHash } from 'node:crypto';
import { decodeImage } from '../../src/biometrics/image/decode.js';
import type { RgbImage } from '../../src/biometrics/image/raster.js';
import { readPpmFrame } from '../../src/protocols/ppm-frames.js';

const decoded = new Map<string, Promise<RgbImage>>();

/**
 * A photo (JPEG or PNG) as a camera's picture reaches a capture session: raw pixels read from a PPM frame, as
 * the sidecar's decoder sends them (src/protocols/ppm-frames.ts), so the pixels are a view inside the frame's bytes,
 * after its header. Each call gives pixels of their own (the photo is decoded once per process).
 */
export async function cameraFrame(image: Uint8Array): Promise<RgbImage> {
  const key = createHash('sha256').update(image).digest('hex');
  let pixels = decoded.get(key);
  if (!pixels) decoded.set(key, (pixels = decodeImage(image)));
  const { width, height, data } = await pixels;
  const header = new TextEncoder().encode(`P6\n${width} ${height}\n255\n`);
  const ppm = new Uint8Array(header.length + data.length);
  ppm.set(header);
  ppm.set(data, header.length);
  return readPpmFrame(ppm);
}

/**
 * Which of `candidates` (photos) a stored image shows: the one whose pixels differ least from its own, by mean
 * absolute difference (a JPEG of a frame differs from the frame by its loss only, a few levels; another photo by
 * tens). -1 when the sizes differ from every candidate.
 */
export async function nearestPhoto(
  stored: Uint8Array,
  candidates: Uint8Array[],
): Promise<{ index: number; diff: number }> {
  const img = await decodeImage(stored);
  let best = { index: -1, diff: Infinity };
  for (const [index, candidate] of candidates.entries()) {
    const c = await cameraFrame(candidate);
    if (c.width !== img.width || c.height !== img.height) continue;
    let sum = 0;
    for (let i = 0; i < img.data.length; i++) sum += Math.abs(img.data[i]! - c.data[i]!);
    const diff = sum / img.data.length;
    if (diff < best.diff) best = { index, diff };
  }
  return best;
}
