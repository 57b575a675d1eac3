import { encodeFaceTemplate } from '../../biometrics/template.js';
import { type AnalyseOptions, type FaceAnalysis, type ImageAnalysis } from '../../biometrics/face/analysis.js';
import type { SettingsService } from '../settings/settings.js';
import { qualityFactors } from '../../biometrics/checks.js';
import { faceCheckSettingsOf } from '../settings/face-checks.js';
import { admitImages, recordStoppedDecode } from './image-admission.js';
import { extractionError } from './extraction-errors.js';
import type { OperationStatus } from '../operation-log/record.js';
import type { SampleServices } from './sample-services.js';
import type { SampleFields } from '../../schemas/field-names.js';

/** One face image that passed every gate, with what it yielded. */
export interface AcceptedFace {
  /** Position in the request's `faces` list. */
  index: number;
  bytes: Uint8Array;
  analysis: ImageAnalysis;
  /** The face the template was made from. */
  face: FaceAnalysis;
  /** Template format v1 of that face. */
  template: Uint8Array;
}

/** Why a sample was refused: the operation status it gives, and a sentence for the client. */
export interface GateFailure {
  status: Extract<
    OperationStatus,
    'NO_FACE_DETECTED' | 'MULTIPLE_FACES' | 'QUALITY_CHECK_FAILED' | 'LIVENESS_CHECK_FAILED'
  >;
  index: number;
  reason: string;
  /** The checks of the refused image, so the client can see what to fix. */
  analysis: ImageAnalysis;
}

interface FaceGateOptions {
  /**
   * Run the attribute models (default true). Enrolment keeps them, so stored samples carry pose and eyes
   * (and liveness when a gate asks for it); VERIFY and IDENTIFY probes skip them unless a liveness or ICAO
   * gate needs them.
   */
  checks?: boolean;
  /** Refuse faces whose ICAO-style checks raised a warning. */
  checkIcao?: boolean;
  /** Demand passive liveness even when `liveness.mode` is NONE. */
  detectLiveness?: boolean;
  /** What the request calls the images, for error messages (`body.faces.1.image`, a form's `body.image.1`). */
  fields: SampleFields;
  /** Gate values of one session (a capture's Advanced init params), over those of the settings. */
  overrides?: Partial<FaceGates>;
}

const area = (f: FaceAnalysis) => f.rectangle.width * f.rectangle.height;

/** The gate settings in force for one request. */
export interface FaceGates {
  allowMultiple: boolean;
  minQuality: number;
  requireLiveness: boolean;
  livenessThreshold: number;
  checkIcao: boolean;
}

/** Read the gates from the settings, with the request's options on top. */
export async function faceGatesOf(
  services: { settings: SettingsService },
  options: { checkIcao?: boolean; detectLiveness?: boolean; overrides?: Partial<FaceGates> },
): Promise<FaceGates> {
  const [allowMultiple, minQuality, livenessMode, livenessThreshold] = await Promise.all([
    services.settings.get('faces.allowMultiple'),
    services.settings.get('quality.face.minimum'),
    services.settings.get('liveness.mode'),
    services.settings.get('liveness.threshold'),
  ]);
  return {
    allowMultiple,
    minQuality,
    requireLiveness: livenessMode === 'PASSIVE' || options.detectLiveness === true,
    livenessThreshold,
    checkIcao: options.checkIcao === true,
    ...options.overrides,
  };
}

/** What lowers a face's quality most, in words a client can act on (the factors of `qualityScore`). */
export function weakestQuality(face: FaceAnalysis): string {
  // Pose and eyes are NaN when their models did not run (no checks): then they took no part in the quality.
  const measured = Number.isNaN(face.yaw) ? { yaw: undefined } : {};
  const eyes = Number.isNaN(face.eyesOpen.left) ? { eyesOpen: undefined } : {};
  const f = qualityFactors({ ...face, ...measured, ...eyes, imageWidth: 0, imageHeight: 0 });
  const [which] = Object.entries(f).sort((a, b) => a[1] - b[1])[0]!;
  const said: Record<string, string> = {
    size: `the face is too small (${face.interEyeDistance.toFixed(0)} px between the eyes)`,
    sharpness: `the face is too blurred (sharpness ${face.sharpness.toFixed(0)} of 100)`,
    pose: 'the head is turned or tilted too far',
    exposure: `the face is ${face.brightness < 55 ? 'too dark' : 'too bright'} (brightness ${face.brightness.toFixed(0)} of 100)`,
    detection: `the face is hard to make out (detector confidence ${face.detectionScore.toFixed(2)})`,
    eyes: 'the eyes look closed',
  };
  return said[which]!;
}

/**
 * Apply the gates to one analysed image: one face (or the largest, when multiple faces are allowed), the
 * minimum quality, liveness when required, no ICAO warnings when asked. Returns the face to use, or why not.
 */
export function gateImage(
  analysis: ImageAnalysis,
  gates: FaceGates,
): { face: FaceAnalysis } | { status: GateFailure['status']; reason: string } {
  if (analysis.faces.length === 0) return { status: 'NO_FACE_DETECTED', reason: 'no face was found in the image' };
  if (analysis.faces.length > 1 && !gates.allowMultiple) {
    return {
      status: 'MULTIPLE_FACES',
      reason: `${analysis.faces.length} faces were found; one is expected (setting faces.allowMultiple)`,
    };
  }
  const face = analysis.faces.reduce((best, f) => (area(f) > area(best) ? f : best));
  if (face.quality < gates.minQuality) {
    return {
      status: 'QUALITY_CHECK_FAILED',
      reason: `face quality ${face.quality.toFixed(0)} is below the minimum ${gates.minQuality} (setting quality.face.minimum): ${weakestQuality(face)}`,
    };
  }
  if (gates.requireLiveness && !(face.livenessScore >= gates.livenessThreshold)) {
    return {
      status: 'LIVENESS_CHECK_FAILED',
      reason: `liveness score ${face.livenessScore.toFixed(0)} is below ${gates.livenessThreshold} (setting liveness.threshold)`,
    };
  }
  if (gates.checkIcao && face.icaoWarnings.length > 0) {
    return { status: 'QUALITY_CHECK_FAILED', reason: `the face raised ICAO warnings: ${face.icaoWarnings.join(', ')}` };
  }
  return { face };
}

/**
 * Analyse images in the worker pool, in parallel; bad bytes become a 400 naming the image's field.
 * `checks: false` skips the attribute models (pose, eyes, liveness, age, gender): about half the cost of a
 * face, for probes whose gates need only the quality of size, sharpness, exposure and detection.
 */
export async function analyseImages(
  services: SampleServices,
  images: Uint8Array[],
  fieldOf: (index: number) => string,
  options: Pick<AnalyseOptions, 'checks' | 'attributes' | 'liveness' | 'livenessGate' | 'embedding'> = {},
): Promise<ImageAnalysis[]> {
  // Judged by the pixels the headers declare, before anything is queued or decoded.
  const maxMegapixels = services.ctx.config.BIMS_MAX_IMAGE_MEGAPIXELS;
  admitImages(images, fieldOf, maxMegapixels);
  const [extractor, checkSettings] = await Promise.all([
    services.extractors.get(),
    faceCheckSettingsOf(services.settings),
  ]);
  // The first image refused or failed fails the request: its images still waiting are dropped, not analysed.
  const batch = new AbortController();
  const opts = {
    checks: options.checks ?? true,
    attributes: options.attributes ?? true,
    liveness: options.liveness ?? true,
    embedding: options.embedding ?? true,
    ...(options.livenessGate ? { livenessGate: options.livenessGate } : {}),
    settings: checkSettings,
    limits: { maxMegapixels },
    signal: batch.signal,
  };
  return Promise.all(
    images.map((bytes, index) =>
      extractor.analyseFace(bytes, opts).catch(async (error: unknown) => {
        batch.abort();
        await recordStoppedDecode(services.ctx, error, fieldOf(index));
        throw extractionError(error, fieldOf(index));
      }),
    ),
  );
}

/** An image and what the models measured on it: what the gates judge and an accepted sample keeps. */
export interface AnalysedImage {
  bytes: Uint8Array;
  analysis: ImageAnalysis;
}

/** A face analysed without its embedding (`embedding: false`): judged, but no template can be made of it yet. */
const notEmbedded = (face: FaceAnalysis) => face.embedding.length === 0;

/**
 * The images a capture keeps, with the embeddings of their faces made where they were analysed without them
 * (`embedding: false`, the capture's frames): the embedding model alone runs, on the same bytes at the same
 * landmarks (`embedFaces`), so each embedding is the one a whole analysis would have made and nothing is
 * detected again. Images whose faces have their embeddings are given back as they are.
 */
export async function embedKeptFaces(
  services: SampleServices,
  images: readonly AnalysedImage[],
  fieldOf: (index: number) => string,
): Promise<AnalysedImage[]> {
  if (!images.some((image) => image.analysis.faces.some(notEmbedded))) return [...images];
  const extractor = await services.extractors.get();
  const limits = { maxMegapixels: services.ctx.config.BIMS_MAX_IMAGE_MEGAPIXELS };
  return Promise.all(
    images.map(async (image, index) => {
      const { faces } = image.analysis;
      if (!faces.some(notEmbedded)) return image;
      // A copy goes to the pool, which may transfer (detach) what it is given: the kept bytes are the sample's.
      const embedFaces = faces.map((f) => f.landmarks);
      const { embeddings } = await extractor
        .analyseFace(new Uint8Array(image.bytes), { embedFaces, limits })
        .catch((error: unknown) => {
          throw extractionError(error, fieldOf(index));
        });
      if (embeddings?.length !== faces.length)
        throw new Error(`the extractor embedded ${embeddings?.length ?? 0} of the ${faces.length} faces asked for`);
      const embedded = faces.map((face, i) => ({ ...face, ...embeddings[i]! }));
      return { bytes: image.bytes, analysis: { ...image.analysis, faces: embedded } };
    }),
  );
}

/**
 * Apply the gates to analysed images, in order: all or nothing, the first refused image (in request order) is
 * reported and no template is made for any. Each accepted image yields its gated face and that face's template.
 * Pure: no model runs here, so a capture re-applies the gates to the analyses of the frames it chose.
 */
export function acceptFaces(
  images: readonly AnalysedImage[],
  gates: FaceGates,
  templateVersion: string,
  fields: SampleFields,
): { accepted: AcceptedFace[]; failure?: undefined } | { accepted?: undefined; failure: GateFailure } {
  const accepted: AcceptedFace[] = [];
  for (const [index, { bytes, analysis }] of images.entries()) {
    const gate = gateImage(analysis, gates);
    if ('status' in gate)
      return { failure: { status: gate.status, index, reason: `${fields.sample(index)}: ${gate.reason}`, analysis } };
    // A template of an empty embedding would match nobody, silently: the caller forgot embedKeptFaces.
    if (notEmbedded(gate.face)) throw new Error(`${fields.sample(index)} was analysed without its embedding`);
    accepted.push({
      index,
      bytes,
      analysis,
      face: gate.face,
      template: encodeFaceTemplate(templateVersion, gate.face),
    });
  }
  return { accepted };
}

/**
 * Analyse face images (in parallel, outside any transaction) and apply the gates of the settings: re-extraction
 * from a template's new samples (enrolment and operations analyse through analyse-samples.ts).
 * Age and gender are not estimated: no gate uses them and no sample stores them.
 * Passive liveness is measured only when a gate needs it (`liveness.mode` PASSIVE, `detectLiveness`, or
 * `checkIcao`, whose warnings include LIVENESS): otherwise the setting says samples are not checked for it,
 * and the model is a tenth of the work.
 */
export async function analyseFaces(
  services: SampleServices,
  images: Uint8Array[],
  options: FaceGateOptions,
): Promise<{ accepted: AcceptedFace[]; failure?: undefined } | { accepted?: undefined; failure: GateFailure }> {
  const extractor = await services.extractors.get();
  const gates = await faceGatesOf(services, options);
  const livenessGated = gates.requireLiveness || gates.checkIcao; // checkIcao refuses a LIVENESS warning too
  const checks = options.checks !== false || livenessGated;
  const analyses = await analyseImages(services, images, options.fields.bytes, {
    checks,
    attributes: false,
    liveness: livenessGated,
  });
  const analysed = analyses.map((analysis, i) => ({ bytes: images[i]!, analysis }));
  return acceptFaces(analysed, gates, extractor.templateVersion, options.fields);
}
