import { BiometricError } from '../errors.js';
import type { AnalyseOptions, FaceAnalysis, FaceEmbedding, ImageAnalysis, StageTimings } from './analysis.js';
import { brightness, faceWarnings, qualityScore, sharpness } from '../checks.js';
import { decodeImage, type RasterSource } from '../image/decode.js';
import { encodePng } from '../image/encode.js';
import { cropResize } from '../image/image.js';
import { type RgbImage } from '../image/raster.js';
import { toGreyPlane, toPlanar } from '../image/planes.js';
import { giveBackU8, lendU8, scratchU8 } from '../image/scratch.js';
import { warpAffine } from '../image/warp.js';
import { resolveFaceCheckSettings, type FaceCheckSettings } from '../settings.js';
import { ageGender, eyesOpen, headPose, liveness, type SquareBox } from './attributes.js';
import { alignmentMap, eyeCentres, landmarksOf } from './align.js';
import { tokenImage } from './token-image.js';
import { decodeDetections, detectInput, DETECT_H, DETECT_W, type Detection } from './detect.js';
import {
  clipped,
  detectionInPhoto,
  framedBytes,
  framedWithEdges,
  framingFactor,
  unframed,
  type Framing,
} from './framing.js';
import { runOnLentInput } from './lent-input.js';
import type { ModelRunner } from './runner.js';

const now = () => performance.now();

/** Square box used by the landmark and attribute models: side = detection height, same centre. */
export function squareBox(d: Detection): SquareBox {
  const side = d.y2 - d.y1;
  return { x: (d.x1 + d.x2) / 2 - side / 2, y: (d.y1 + d.y2) / 2 - side / 2, side };
}

/** Input tensor of fr_landmark: the square box cropped to 64x64, grey levels / 256 (into `into` when given). */
export function landmarkInput(img: RgbImage, box: SquareBox, into?: Float32Array): Float32Array {
  const crop = cropResize(img, box.x, box.y, box.side, box.side, 64, 64, scratchU8('crop raster', 64 * 64 * 3));
  return toGreyPlane(crop, 256, into);
}

/** 68 landmarks in image pixels from fr_landmark (64x64 grey /256 crop of the square box). */
async function landmarks68(runner: ModelRunner, img: RgbImage, box: SquareBox): Promise<Float32Array> {
  const out = (await runOnLentInput(runner, 'fr_landmark', [1, 1, 64, 64], (into) => landmarkInput(img, box, into)))
    .output;
  const lm = new Float32Array(136);
  for (let i = 0; i < 68; i++) {
    lm[i * 2] = out[i * 2] * box.side + box.x;
    lm[i * 2 + 1] = out[i * 2 + 1] * box.side + box.y;
  }
  return lm;
}

/** Face aligned to the ArcFace 112x112 reference by a 5-point similarity transform. */
export function alignFace(img: RgbImage, lm: Float32Array): RgbImage {
  return warpAffine(img, alignmentMap(lm, 112), 112, 112);
}

/** L2-normalised embedding of an aligned 112x112 face (BGR planes, (v-127)/128). */
async function embedAligned(runner: ModelRunner, aligned: RgbImage): Promise<FaceEmbedding> {
  const raw = (
    await runOnLentInput(runner, 'fr_feature', [1, 3, 112, 112], (into) =>
      toPlanar(aligned, [127, 127, 127], [128, 128, 128], 'BGR', into),
    )
  ).output;
  let s = 0;
  for (let i = 0; i < raw.length; i++) s += raw[i] * raw[i];
  const norm = Math.sqrt(s);
  const embedding = new Float32Array(raw.length);
  for (let i = 0; i < raw.length; i++) embedding[i] = raw[i] / (norm || 1);
  return { embedding, embeddingNorm: norm };
}

/** What a face analysed with `embedding: false` holds in place of its embedding. */
const notEmbedded = (): FaceEmbedding => ({ embedding: new Float32Array(0), embeddingNorm: NaN });

/**
 * Decodes and analyses an image: detection, landmarks, alignment and embedding for every face, and (unless
 * `checks: false`) the quality/liveness/pose/eye/age/gender checks with their ICAO warnings.
 *
 * @throws BiometricError INVALID_IMAGE / UNSUPPORTED_FORMAT / IMAGE_TOO_LARGE for bad input.
 */
export async function analyseImage(
  runner: ModelRunner,
  bytes: Uint8Array,
  opts: AnalyseOptions = {},
): Promise<ImageAnalysis> {
  // The decoded raster (786 KB for a 512x512 photo) is read only within the analysis, and nothing it answers
  // holds any part of it: lent for the analysis and given back after it, like the model inputs.
  const lent: Uint8Array[] = [];
  try {
    return await analyseWithin(runner, bytes, opts, (n) => {
      const raster = lendU8(n);
      lent.push(raster);
      return raster;
    });
  } finally {
    for (const raster of lent) giveBackU8(raster);
  }
}

async function analyseWithin(
  runner: ModelRunner,
  bytes: Uint8Array,
  opts: AnalyseOptions,
  raster: RasterSource,
): Promise<ImageAnalysis> {
  const settings = resolveFaceCheckSettings(opts.settings);
  const withChecks = opts.checks !== false;
  const withAttributes = withChecks && opts.attributes !== false;
  const withLiveness = withChecks && opts.liveness !== false;
  const withEmbedding = opts.embedding !== false;
  const timings: StageTimings = { decode: 0, detect: 0, landmarks: 0, embed: 0, checks: 0, total: 0 };
  const t0 = now();
  const img = await decodeImage(bytes, opts.limits, raster);
  let t = now();
  timings.decode = t - t0;
  if (opts.embedFaces) return embedFacesOf(runner, img, opts.embedFaces, timings, t0);

  const { framing, detections } = await findFaces(runner, img, settings, raster, opts.framing !== false);
  timings.detect = now() - t;

  const faces: FaceAnalysis[] = [];
  let largest: { area: number; lm: Float32Array } | undefined;
  for (const d of detections) {
    t = now();
    // The box moved back from the detector's canvas to the photo (it may reach past the photo's edges: the
    // crops repeat the edge pixels there); the box a client is told, and the attribute models use, is cut to it.
    const whole = framing.image === img ? d : detectionInPhoto(d, framing);
    const inPhoto = framing.image === img ? d : clipped(whole, img.width, img.height);
    const box = squareBox(inPhoto);
    const lm = await landmarks68(runner, img, squareBox(whole));
    const area = (inPhoto.x2 - inPhoto.x1) * (inPhoto.y2 - inPhoto.y1);
    if (!largest || area > largest.area) largest = { area, lm };
    timings.landmarks += now() - t;

    t = now();
    const aligned = alignFace(img, lm);
    const { embedding, embeddingNorm } = withEmbedding ? await embedAligned(runner, aligned) : notEmbedded();
    timings.embed += now() - t;

    t = now();
    const [le, re] = eyeCentres(lm);
    const rectangle = { x: inPhoto.x1, y: inPhoto.y1, width: inPhoto.x2 - inPhoto.x1, height: inPhoto.y2 - inPhoto.y1 };
    const measures = {
      rectangle,
      imageWidth: img.width,
      imageHeight: img.height,
      detectionScore: d.score,
      interEyeDistance: Math.hypot(re[0] - le[0], re[1] - le[1]),
      sharpness: sharpness(aligned),
      brightness: brightness(aligned),
    };
    let yaw = NaN,
      pitch = NaN,
      roll = NaN,
      live = NaN,
      age = NaN,
      maleScore = NaN;
    let eyes = { left: NaN, right: NaN };
    let livenessMeasured = false;
    if (withChecks) {
      ({ yaw, pitch, roll } = await headPose(runner, img, box));
      const e = await eyesOpen(runner, img, lm);
      eyes = { left: e.left * 100, right: e.right * 100 };
      // The quality needs no liveness: known here, it says whether a capture's judge could keep this face.
      const quality = qualityScore({ ...measures, yaw, pitch, roll, eyesOpen: eyes });
      livenessMeasured = withLiveness && mayBeKept(opts.livenessGate, detections.length, quality);
      if (livenessMeasured) live = (await liveness(runner, img, box)) * 100;
      if (withAttributes) ({ age, maleScore } = await ageGender(runner, img, box));
    }
    const m = withChecks
      ? { ...measures, yaw, pitch, roll, eyesOpen: eyes, ...(livenessMeasured ? { livenessScore: live } : {}) }
      : measures;
    faces.push({
      rectangle,
      detectionScore: d.score,
      landmarks: Array.from({ length: 68 }, (_, i) => [lm[i * 2], lm[i * 2 + 1]] as [number, number]),
      interEyeDistance: measures.interEyeDistance,
      yaw,
      pitch,
      roll,
      eyesOpen: eyes,
      livenessScore: live,
      quality: qualityScore(m),
      sharpness: measures.sharpness,
      brightness: measures.brightness,
      estimatedAge: age,
      gender: Number.isNaN(maleScore) ? 'UNKNOWN' : maleScore >= 0.5 ? 'MALE' : 'FEMALE',
      genderScore: maleScore,
      embedding,
      embeddingNorm,
      icaoWarnings: faceWarnings(m, settings),
    });
    timings.checks += now() - t;
  }
  const result: ImageAnalysis = {
    width: img.width,
    height: img.height,
    format: img.format,
    orientation: img.orientation,
    faces,
    timings,
  };
  if (opts.tokenImage && largest) result.tokenImage = encodePng(tokenImage(img, largest.lm));
  timings.total = now() - t0;
  return result;
}

/** Whether a face passes the frame gates `livenessGate` names (none: every face does). */
function mayBeKept(gate: AnalyseOptions['livenessGate'], faces: number, quality: number): boolean {
  return !gate || ((faces === 1 || gate.allowMultiple) && quality >= gate.minQuality);
}

/**
 * The embeddings of the faces with these landmarks in a decoded image, as `analyseWithin` makes them from its
 * own landmarks (the same alignment of the same raster): what `embedFaces` asks for.
 */
async function embedFacesOf(
  runner: ModelRunner,
  img: RgbImage & Pick<ImageAnalysis, 'format' | 'orientation'>,
  faces: readonly (readonly (readonly [number, number])[])[],
  timings: StageTimings,
  t0: number,
): Promise<ImageAnalysis> {
  const embeddings: FaceEmbedding[] = [];
  for (const points of faces) {
    if (points.length !== 68)
      throw new BiometricError('EXTRACTION_FAILED', `a face to embed needs its 68 landmarks, got ${points.length}`);
    const t = now();
    embeddings.push(await embedAligned(runner, alignFace(img, landmarksOf(points))));
    timings.embed += now() - t;
  }
  timings.total = now() - t0;
  const { width, height, format, orientation } = img;
  return { width, height, format, orientation, faces: [], embeddings, timings };
}

/**
 * The faces of a photo and the canvas they were found on (framing.ts): the photo itself, or, when it is framed
 * for the detector, a larger canvas around it (lent from `raster`). Detections are in the canvas's pixels,
 * highest score first, at least `minFaceSize` high, at most `maxFaces`.
 */
async function findFaces(
  runner: ModelRunner,
  img: RgbImage,
  settings: FaceCheckSettings,
  raster: RasterSource,
  frameSmall: boolean,
): Promise<{ framing: Framing; detections: Detection[] }> {
  const detectOn = async (canvas: RgbImage) => {
    const det = await runOnLentInput(runner, 'fr_detect', [1, 3, DETECT_H, DETECT_W], (into) =>
      detectInput(canvas, into),
    );
    return decodeDetections(det.scores, det.boxes, canvas.width, canvas.height, {
      scoreThreshold: settings.detectionThreshold,
      iouThreshold: settings.nmsIouThreshold,
      maxFaces: 1000,
    })
      .filter((d) => d.y2 - d.y1 >= settings.minFaceSize)
      .slice(0, settings.maxFaces);
  };
  const factor = frameSmall ? framingFactor(img) : 1;
  if (factor === 1) return { framing: unframed(img), detections: await detectOn(img) };
  const framing = framedWithEdges(img, factor, raster(framedBytes(img.width, img.height, factor)));
  return { framing, detections: await detectOn(framing.image) };
}
