/**
 * Thresholds of the face checks, in one place. The service maps its stored settings onto this object
 * (e.g. `quality.face.minimum` -> `minQuality`, `liveness.threshold` -> `minLiveness`); anything not given
 * falls back to `DEFAULT_FACE_CHECK_SETTINGS`.
 */
export interface FaceCheckSettings {
  /** Detector face probability needed to report a face (0..1). */
  detectionThreshold: number;
  /** IoU above which overlapping detections are merged (0..1). */
  nmsIouThreshold: number;
  /** Faces smaller than this (box height, pixels) are ignored. */
  minFaceSize: number;
  /** At most this many faces are analysed per image (largest detector scores first). */
  maxFaces: number;
  /** |yaw| above this (degrees) gives YAW_LEFT / YAW_RIGHT. */
  maxYaw: number;
  /** |pitch| above this (degrees) gives PITCH_UP / PITCH_DOWN. */
  maxPitch: number;
  /** |roll| above this (degrees) gives ROLL_LEFT / ROLL_RIGHT. */
  maxRoll: number;
  /** Eye openness (0..100) below this gives EYES_CLOSED. */
  minEyeOpen: number;
  /** Sharpness (0..100) below this gives BLURRED. */
  minSharpness: number;
  /** Brightness (0..100, mean face luminance) below this gives UNDEREXPOSED. */
  minBrightness: number;
  /** Brightness above this gives OVEREXPOSED. */
  maxBrightness: number;
  /** Inter-eye distance (pixels) below this gives TOO_FAR. */
  minInterEyeDistance: number;
  /** Face box height over image height above this gives TOO_NEAR. */
  maxFaceHeightRatio: number;
  /** Face centre further than this fraction of the image from its centre gives TOO_NORTH/SOUTH/EAST/WEST. */
  maxCentreOffset: number;
  /** Passive liveness score (0..100) below this gives LIVENESS. */
  minLiveness: number;
  /** Quality (0..100) below this fails the check (`passed` false); no ICAO warning of its own. */
  minQuality: number;
}

/** Defaults of every face check threshold. */
export const DEFAULT_FACE_CHECK_SETTINGS: Readonly<FaceCheckSettings> = Object.freeze({
  detectionThreshold: 0.65,
  nmsIouThreshold: 0.4,
  minFaceSize: 20,
  maxFaces: 50,
  maxYaw: 20,
  maxPitch: 20,
  maxRoll: 15,
  minEyeOpen: 50,
  minSharpness: 20,
  minBrightness: 25,
  maxBrightness: 85,
  minInterEyeDistance: 30,
  maxFaceHeightRatio: 0.9,
  maxCentreOffset: 0.3,
  minLiveness: 50,
  minQuality: 50,
});

/** Merges partial settings over the defaults, ignoring undefined and non-finite values. */
export function resolveFaceCheckSettings(partial?: Partial<FaceCheckSettings>): FaceCheckSettings {
  const out: FaceCheckSettings = { ...DEFAULT_FACE_CHECK_SETTINGS };
  if (partial) {
    for (const [k, v] of Object.entries(partial)) {
      if (k in out && typeof v === 'number' && Number.isFinite(v)) (out as unknown as Record<string, number>)[k] = v;
    }
  }
  return out;
}
