/**
 * The biometric core (pure: no I/O, no runtime globals). See docs/template-format.md.
 *
 * - `analyseImage(runner, bytes, opts)` (face/pipeline): decode, detect, landmarks, align, embed, checks.
 * - `encodeTemplate` / `parseTemplate` (template): binary format v1, int8 embeddings.
 * - `Gallery` / `FaceGallery` (matcher): exact 1:1 and 1:N search, partitioned by template version.
 * - `cosineToScore` / `scoreToFar` / `farToScore` (calibration): the -12*log10(FAR) score scale.
 * - `DEFAULT_FACE_CHECK_SETTINGS` / `resolveFaceCheckSettings` (settings): every check threshold.
 * - `analyseVoice(runner, wav)` (voice/pipeline): WAV decode, 16 kHz resampling, VAD, measures, GE2E embedding.
 * - `fuseScores` (fusion): face and voice scores fused on the calibrated scale.
 */
export * from './errors.js';
export * from './settings.js';
export * from './checks.js';
export * from './template.js';
export * from './matcher-types.js';
export * from './face-gallery.js';
export * from './gallery.js';
export * from './calibration.js';
export * from './fusion.js';
export {
  analyseVoice,
  VOICE_EMBEDDING_DIMS,
  type VoiceAnalysis,
  type VoiceModelRunner,
  type VoiceAnalyseOptions,
} from './voice/pipeline.js';
export { decodeWav, encodeWav16 } from './voice/wav.js';
export { DEFAULT_VOICE_GATES, gateVoice, type VoiceGates, type VoiceGateFailure } from './voice/settings.js';
export {
  decodeImage,
  imageCost,
  sniffFormat,
  DEFAULT_MAX_MEGAPIXELS,
  type ImageCost,
  type DecodedImage,
  type ImageFormat,
  type DecodeLimits,
} from './image/decode.js';
export { encodePng } from './image/encode.js';
export {
  analyseImage,
  renderTokenImage,
  tokenImage,
  type AnalyseOptions,
  type FaceAnalysis,
  type ImageAnalysis,
  type Rectangle,
  type StageTimings,
} from './face/pipeline.js';
export type { ModelRunner, FaceModelId } from './face/runner.js';
export { FACE_MODELS, TEMPLATE_MODELS } from './face/runner.js';

/** Default verify/identify threshold on the score scale (48 = FAR 1e-4), as the `matching.threshold` setting. */
export const DEFAULT_MATCH_THRESHOLD = 48;
