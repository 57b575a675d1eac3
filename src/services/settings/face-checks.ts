import { DEFAULT_FACE_CHECK_SETTINGS, type FaceCheckSettings } from '../../biometrics/settings.js';
import type { SettingsService } from './settings.js';

/**
 * The face engine's thresholds from the effective settings: `checks.face.*` by name, plus the two gates kept
 * under their own keys (`quality.face.minimum`, `liveness.threshold`). Services pass the result to the face
 * pipeline so an administrator's change applies to the next request.
 */
export async function faceCheckSettingsOf(settings: SettingsService): Promise<FaceCheckSettings> {
  const [
    detectionThreshold,
    minFaceSize,
    maxFaces,
    maxYaw,
    maxPitch,
    maxRoll,
    minEyeOpen,
    minSharpness,
    minBrightness,
    maxBrightness,
    minInterEyeDistance,
    maxFaceHeightRatio,
    maxCentreOffset,
    minQuality,
    minLiveness,
  ] = await Promise.all([
    settings.get('checks.face.detectionThreshold'),
    settings.get('checks.face.minFaceSize'),
    settings.get('checks.face.maxFaces'),
    settings.get('checks.face.maxYaw'),
    settings.get('checks.face.maxPitch'),
    settings.get('checks.face.maxRoll'),
    settings.get('checks.face.minEyeOpen'),
    settings.get('checks.face.minSharpness'),
    settings.get('checks.face.minBrightness'),
    settings.get('checks.face.maxBrightness'),
    settings.get('checks.face.minInterEyeDistance'),
    settings.get('checks.face.maxFaceHeightRatio'),
    settings.get('checks.face.maxCentreOffset'),
    settings.get('quality.face.minimum'),
    settings.get('liveness.threshold'),
  ]);
  return {
    ...DEFAULT_FACE_CHECK_SETTINGS, // keys with no setting of their own (NMS overlap) keep the engine's value
    detectionThreshold,
    minFaceSize,
    maxFaces,
    maxYaw,
    maxPitch,
    maxRoll,
    minEyeOpen,
    minSharpness,
    minBrightness,
    maxBrightness,
    minInterEyeDistance,
    maxFaceHeightRatio,
    maxCentreOffset,
    minQuality,
    minLiveness,
  };
}
