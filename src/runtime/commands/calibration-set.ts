// The impostor set the face calibration is built and checked on (scripts/eval-calibrate.ts, docs/calibration.md):
// labelled photos plus copies of each made the way real uploads degrade them: downscaled to a longer side of
// 150, 112 and 72 px, cropped tight, mirrored, and recompressed hard. A copy keeps its photo's identity, so it
// is paired as an impostor against every photo and copy of the other identities; that multiplies the pairs
// (about 2,500 images give 3 million) and puts low-resolution and crop-against-crop pairs into the tail the
// score scale is read from. The copies are files (LFW layout) under a folder of their own, so `npm run eval`
// reads them too and extraction caches them by content.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import jpeg from 'jpeg-js';
import { decodeImage } from '../../biometrics/image/decode.js';
import { resizeArea } from '../../biometrics/image/image.js';
import type { RgbImage } from '../../biometrics/image/raster.js';
import { loadDataset } from './eval-lib.js';

/** One way of degrading a photo: its name (the file suffix) and what it does. */
interface Variant {
  name: string;
  make: (img: RgbImage) => { img: RgbImage; quality: number } | null;
}

/** Downscaled so the longer side is `side` px (photos already that small are left out). */
const downscaled = (side: number): Variant => ({
  name: `s${side}`,
  make: (img) => {
    const long = Math.max(img.width, img.height);
    if (long <= side) return null;
    const f = side / long;
    return {
      img: resizeArea(img, Math.max(1, Math.round(img.width * f)), Math.max(1, Math.round(img.height * f))),
      quality: 85,
    };
  },
});

/** The middle 60% of each side: a face that fills the frame, as tight crops do. */
const tight: Variant = {
  name: 'crop',
  make: (img) => {
    const w = Math.round(img.width * 0.6),
      h = Math.round(img.height * 0.6);
    const x0 = Math.round((img.width - w) / 2),
      y0 = Math.round((img.height - h) / 2);
    const data = new Uint8Array(w * h * 3);
    for (let y = 0; y < h; y++)
      data.set(img.data.subarray(((y0 + y) * img.width + x0) * 3, ((y0 + y) * img.width + x0 + w) * 3), y * w * 3);
    return { img: { width: w, height: h, data }, quality: 90 };
  },
};

const mirrored: Variant = {
  name: 'flip',
  make: (img) => {
    const { width: w, height: h } = img;
    const data = new Uint8Array(w * h * 3);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        const s = (y * w + x) * 3,
          d = (y * w + (w - 1 - x)) * 3;
        data[d] = img.data[s]!;
        data[d + 1] = img.data[s + 1]!;
        data[d + 2] = img.data[s + 2]!;
      }
    return { img: { width: w, height: h, data }, quality: 90 };
  },
};

/** JPEG at quality 30: the blocking of a photo sent through a messenger. */
const recompressed: Variant = { name: 'q30', make: (img) => ({ img, quality: 30 }) };

export const VARIANTS: readonly Variant[] = [
  downscaled(150),
  downscaled(112),
  downscaled(72),
  tight,
  mirrored,
  recompressed,
];

function encodeJpeg(img: RgbImage, quality: number): Uint8Array {
  const rgba = new Uint8Array(img.width * img.height * 4);
  for (let i = 0, j = 0; i < img.data.length; i += 3, j += 4) {
    rgba[j] = img.data[i]!;
    rgba[j + 1] = img.data[i + 1]!;
    rgba[j + 2] = img.data[i + 2]!;
    rgba[j + 3] = 255;
  }
  return new Uint8Array(jpeg.encode({ data: rgba, width: img.width, height: img.height }, quality).data);
}

/**
 * Writes every photo of `datasets` (identity/image folders) and its degraded copies (`variants`) into `out`/identity/, as
 * `<photo>.jpg` (the original bytes) and `<photo>__<variant>.jpg`. Identities keep their folder names, so the
 * datasets must not share a person under two names. Existing files are kept (a second run only adds).
 * Returns the number of images in `out`.
 */
export async function writeCalibrationSet(
  datasets: string[],
  out: string,
  log = (s: string) => process.stderr.write(s),
  variants: readonly Variant[] = VARIANTS,
): Promise<number> {
  let n = 0;
  const sources = datasets.flatMap((d) => loadDataset(d));
  for (const s of sources) {
    const dir = join(out, s.identity);
    mkdirSync(dir, { recursive: true });
    const bytes = new Uint8Array(readFileSync(s.file));
    // the file name carries a hash of the source, so two datasets' "img1.jpg" of one identity stay apart
    const stem = `${basename(s.file, extname(s.file))}-${createHash('sha256').update(bytes).digest('hex').slice(0, 8)}`;
    const original = join(dir, `${stem}${extname(s.file).toLowerCase()}`);
    if (!existsSync(original)) writeFileSync(original, bytes);
    n++;
    const missing = variants.filter((v) => !existsSync(join(dir, `${stem}__${v.name}.jpg`)));
    if (missing.length) {
      const img = await decodeImage(bytes);
      for (const v of missing) {
        const made = v.make(img);
        if (made) writeFileSync(join(dir, `${stem}__${v.name}.jpg`), encodeJpeg(made.img, made.quality));
      }
    }
    n += variants.filter((v) => existsSync(join(dir, `${stem}__${v.name}.jpg`))).length;
    if (n % 200 < variants.length + 1) log(`\rcalibration set: ${n} images`);
  }
  log(`\rcalibration set: ${n} images from ${sources.length} photos\n`);
  return n;
}
