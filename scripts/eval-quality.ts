// npx tsx scripts/eval-quality.ts [--dataset DIR]  (default ../shared/data/faces-dev)
// How small or soft a face may be before genuine scores collapse, against what the quality gate refuses
// (docs/extraction.md, "How small or soft a face may be"). Probes: the first two photos of each identity whose
// longer side is 200 px or more, made smaller (the whole photo scaled down) or blurred (Gaussian); each is
// compared with every other such photo of the dataset, full size. Per row: failures to enrol, the median
// inter-eye distance, sharpness and quality the pipeline reports, how many the default gate (quality 50)
// refuses, and the share of genuine pairs scoring over 48 (and of impostor pairs, as a check). A last row takes
// the set's own photos under 200 px (faces-dev's 72-px copies) as they are.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { FACE_CALIBRATION } from '../src/biometrics/calibration.js';
import { analyseImage } from '../src/biometrics/face/pipeline.js';
import { decodeImage } from '../src/biometrics/image/decode.js';
import { encodePng } from '../src/biometrics/image/encode.js';
import { cropResize } from '../src/biometrics/image/image.js';
import type { RgbImage } from '../src/biometrics/image/raster.js';
import { cosineInt8, quantize } from '../src/biometrics/template.js';
import { enableFastJpegNode, nodeModelLoader } from '../src/extraction/node-models.js';
import { OrtWebRunner } from '../src/extraction/ort-web-runner.js';

const i = process.argv.indexOf('--dataset');
const dataset = i >= 0 ? process.argv[i + 1]! : '../shared/data/faces-dev';
const THRESHOLD = 48;
const MIN_SIDE = 200;

await enableFastJpegNode();
const runner = await OrtWebRunner.create({ loadModel: nodeModelLoader() });
const photos: { identity: string; file: string; img: RgbImage }[] = [];
/** The set's own small photos (faces-dev's 72-px copies), probes as they are. */
const small: typeof photos = [];
for (const id of readdirSync(dataset).sort()) {
  const dir = join(dataset, id);
  if (!statSync(dir).isDirectory()) continue;
  for (const f of readdirSync(dir).sort()) {
    if (!/\.(jpe?g|png)$/i.test(f)) continue;
    const img = await decodeImage(new Uint8Array(readFileSync(join(dir, f))));
    (Math.max(img.width, img.height) < MIN_SIDE ? small : photos).push({
      identity: id,
      file: `${id}/${f}`,
      img: { width: img.width, height: img.height, data: img.data.slice() },
    });
  }
}
const gallery: { identity: string; file: string; q: Int8Array }[] = [];
for (const p of photos) {
  const a = await analyseImage(runner, encodePng(p.img), { checks: false });
  if (a.faces[0]) gallery.push({ identity: p.identity, file: p.file, q: quantize(a.faces[0].embedding).q });
}
const probes = photos.filter((p, k) => photos.slice(0, k).filter((o) => o.identity === p.identity).length < 2);

/** Separable Gaussian blur, edges repeated. */
function blur(img: RgbImage, sigma: number): RgbImage {
  const r = Math.ceil(3 * sigma);
  const k = Array.from({ length: 2 * r + 1 }, (_, j) => Math.exp(-((j - r) ** 2) / (2 * sigma * sigma)));
  const sum = k.reduce((a, b) => a + b, 0);
  const { width: W, height: H } = img;
  const pass = (src: Uint8Array, across: boolean) => {
    const out = new Uint8Array(src.length);
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++)
        for (let c = 0; c < 3; c++) {
          let s = 0;
          for (let d = -r; d <= r; d++) {
            const xx = across ? Math.min(W - 1, Math.max(0, x + d)) : x;
            const yy = across ? y : Math.min(H - 1, Math.max(0, y + d));
            s += src[(yy * W + xx) * 3 + c]! * k[d + r]!;
          }
          out[(y * W + x) * 3 + c] = Math.round(s / sum);
        }
    return out;
  };
  return { width: W, height: H, data: pass(pass(img.data, true), false) };
}

const median = (xs: number[]) => ([...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN).toFixed(1);
async function row(label: string, degrade: (img: RgbImage) => RgbImage, probed = probes) {
  let failed = 0,
    refused = 0,
    genuine = 0,
    genuineOver = 0,
    impostor = 0,
    impostorOver = 0;
  const ied: number[] = [],
    sharp: number[] = [],
    quality: number[] = [];
  for (const p of probed) {
    const a = await analyseImage(runner, encodePng(degrade(p.img)), {
      checks: true,
      attributes: false,
      liveness: false,
    });
    const f = a.faces[0];
    if (!f) {
      failed++;
      continue;
    }
    ied.push(f.interEyeDistance);
    sharp.push(f.sharpness);
    quality.push(f.quality);
    if (f.quality < 50) refused++;
    const q = quantize(f.embedding).q;
    for (const g of gallery) {
      if (g.file === p.file) continue;
      const over = FACE_CALIBRATION.cosineToScore(cosineInt8(q, g.q)) > THRESHOLD ? 1 : 0;
      if (g.identity === p.identity) genuine++, (genuineOver += over);
      else impostor++, (impostorOver += over);
    }
  }
  console.log(
    `${label.padEnd(12)} failed ${failed}/${probed.length}  IED ${median(ied)}  sharpness ${median(sharp)}  quality ${median(quality)}  refused ${refused}  genuine over ${THRESHOLD} ${(genuineOver / genuine).toFixed(3)}  impostor ${impostorOver}/${impostor}`,
  );
}
console.log(`${dataset}: ${probes.length} probes, ${gallery.length} full-size photos`);
await row('as is', (img) => img);
for (const side of [128, 96, 84, 72, 60, 54, 48, 40, 32])
  await row(`${side} px`, (img) => {
    const s = side / Math.max(img.width, img.height);
    return cropResize(img, 0, 0, img.width, img.height, Math.round(img.width * s), Math.round(img.height * s));
  });
for (const sigma of [1, 1.5, 2, 2.5, 3, 4]) await row(`blur ${sigma}`, (img) => blur(img, sigma));
await row('small as is', (img) => img, small);
await runner.release();
