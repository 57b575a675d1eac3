// What an analysis of one image is asked (AnalyseOptions) and what it answers (ImageAnalysis, a FaceAnalysis per
// face). The pipeline that measures it is pipeline.ts, which re-exports these for its many importers.
import type { IcaoWarning } from '../checks.js';
import type { DecodeLimits, ImageFormat } from '../image/decode.js';
import type { FaceCheckSettings } from '../settings.js';

/** Options of one analysis. */
export interface AnalyseOptions {
  /**
   * Run the attribute models (liveness, eyes, pose, age, gender) and the warnings (default true).
   * false computes only what a template needs (detect, landmarks, embedding) plus sharpness/brightness.
   */
  checks?: boolean;
  /**
   * With checks, also estimate age and gender (default true). They decide no gate and are stored with no
   * sample, so enrolment and re-extraction leave them out: two models and a crop less per face.
   */
  attributes?: boolean;
  /**
   * With checks, also run the passive liveness model (default true). Enrolment and re-extraction measure
   * liveness only when a gate asks for it (setting `liveness.mode` PASSIVE, or the request's
   * `detectLiveness` or `checkIcao`): a model and a crop of 2.7 times the face, about a tenth of an enrolment's work.
   */
  liveness?: boolean;
  /**
   * With liveness, measure it only on the faces a live capture's frame judge can keep: a face whose quality
   * reaches `minQuality`, in a picture of one face unless `allowMultiple` (the judge's gates before liveness,
   * which it reads only on the frames it keeps). The other faces are as without liveness: `livenessScore` NaN, no
   * LIVENESS warning. Absent: every face.
   */
  livenessGate?: { minQuality: number; allowMultiple: boolean };
  /**
   * Frame a small photo on a larger canvas before detection (framing.ts; default true). false is the pipeline of
   * template version p2, kept for measuring the change (`npm run bench -- face`, `npm run eval -- --no-framing`):
   * its templates are not those of the current version.
   */
  framing?: boolean;
  /**
   * Make each face's embedding (default true). false leaves `embedding` empty and `embeddingNorm` NaN, everything
   * else measured as with it: a live capture judges its frames without their embeddings (a third of a frame's
   * analysis) and has them made, with `embedFaces`, for the frames it keeps.
   */
  embedding?: boolean;
  /**
   * Only embed the faces with these 68 landmarks each (`FaceAnalysis.landmarks` of an analysis of these same
   * bytes made with `embedding: false`): decode, alignment and the embedding model, nothing looked for again (no
   * detection, no landmarks, no checks). The answer's `embeddings` hold them in this order, its `faces` is empty;
   * each is the embedding the analysis would have made with `embedding: true`, bit for bit.
   */
  embedFaces?: [number, number][][];
  /** Produce a token image (PNG) of the largest face, the one the enrolment gates take (default false). */
  tokenImage?: boolean;
  /** Check thresholds; missing keys take `DEFAULT_FACE_CHECK_SETTINGS`. */
  settings?: Partial<FaceCheckSettings>;
  /** Decoder limits. */
  limits?: DecodeLimits;
}

/** Axis-aligned rectangle in image pixels. */
export interface Rectangle {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Everything measured on one face. */
export interface FaceAnalysis {
  /** Detector box in image pixels (of the upright image). */
  rectangle: Rectangle;
  /** Detector probability 0..1. */
  detectionScore: number;
  /** 68 iBUG landmarks [x, y] in image pixels. */
  landmarks: [number, number][];
  /** Distance between the eye centres, pixels. */
  interEyeDistance: number;
  /** Head pose, degrees (NaN when checks are off). */
  yaw: number;
  pitch: number;
  roll: number;
  /** Eye openness 0..100 of the subject's left and right eye (NaN when checks are off). */
  eyesOpen: { left: number; right: number };
  /** Passive liveness 0..100 (NaN when not measured: checks or liveness off). Needs a camera frame with context around the face. */
  livenessScore: number;
  /** Quality 0..100 (see `qualityScore`). */
  quality: number;
  /** Sharpness 0..100 of the aligned face. */
  sharpness: number;
  /** Mean face luminance 0..100. */
  brightness: number;
  /** Estimated age, years (NaN when checks or attributes are off). */
  estimatedAge: number;
  /** 'MALE' | 'FEMALE' from a weak model (85% correct on 80 labelled portraits); 'UNKNOWN' when checks or attributes are off. */
  gender: 'MALE' | 'FEMALE' | 'UNKNOWN';
  /** Raw gender score 0..1 (above 0.5 = male). */
  genderScore: number;
  /** 512-d embedding, L2-normalised; compare by dot product (empty when analysed with `embedding: false`). */
  embedding: Float32Array;
  /** Norm of the raw embedding before normalisation (low values mean a poor face; NaN when not embedded). */
  embeddingNorm: number;
  /** Warnings of this face under the settings used. */
  icaoWarnings: IcaoWarning[];
}

/** Result of analysing one image. */
export interface ImageAnalysis {
  width: number;
  height: number;
  format: ImageFormat;
  /** EXIF orientation that was applied (1 = none). */
  orientation: number;
  /** Faces, highest detector score first. */
  faces: FaceAnalysis[];
  /** ISO/IEC 19794-5 token image (PNG) of faces[0], when asked for and a face was found. */
  tokenImage?: Uint8Array;
  /** With `embedFaces`: the embeddings of the faces asked for, in their order. */
  embeddings?: FaceEmbedding[];
  /** Milliseconds spent per stage (summed over faces). */
  timings: StageTimings;
}

/** A face's embedding as `FaceAnalysis` holds it. */
export interface FaceEmbedding {
  embedding: Float32Array;
  embeddingNorm: number;
}

/** Per-stage milliseconds. */
export interface StageTimings {
  decode: number;
  detect: number;
  landmarks: number;
  embed: number;
  checks: number;
  total: number;
}
