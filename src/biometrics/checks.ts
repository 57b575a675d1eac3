import type { RgbImage } from './image/raster.js';
import { toGrey } from './image/planes.js';
import type { FaceCheckSettings } from './settings.js';

/** ICAO-style warnings (domain.md, ChecksFromImage). */
export type IcaoWarning =
  | 'YAW_LEFT'
  | 'YAW_RIGHT'
  | 'PITCH_UP'
  | 'PITCH_DOWN'
  | 'ROLL_LEFT'
  | 'ROLL_RIGHT'
  | 'TOO_NEAR'
  | 'TOO_FAR'
  | 'TOO_NORTH'
  | 'TOO_SOUTH'
  | 'TOO_EAST'
  | 'TOO_WEST'
  | 'EYES_CLOSED'
  | 'BLURRED'
  | 'UNDEREXPOSED'
  | 'OVEREXPOSED'
  | 'LIVENESS';

/**
 * Sharpness 0..100 of an aligned grey face crop: the variance of a 3x3 Laplacian, compressed by
 * 100 * v / (v + 150) (150 is a typical value of a sharp 112x112 face; a heavy blur gives < 10).
 * Only the central part of the crop is used so hair and background edges count less.
 */
export function sharpness(face: RgbImage): number {
  const g = toGrey(face);
  const W = face.width,
    H = face.height;
  const x0 = Math.floor(W * 0.2),
    x1 = Math.ceil(W * 0.8),
    y0 = Math.floor(H * 0.25),
    y1 = Math.ceil(H * 0.9);
  let s = 0,
    s2 = 0,
    n = 0;
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const p = y * W + x;
      const l = g[p - 1] + g[p + 1] + g[p - W] + g[p + W] - 4 * g[p];
      s += l;
      s2 += l * l;
      n++;
    }
  }
  const v = s2 / n - (s / n) ** 2;
  return (100 * v) / (v + 150);
}

/** Brightness 0..100: mean luminance of the central face region of an aligned crop. */
export function brightness(face: RgbImage): number {
  const g = toGrey(face);
  const W = face.width,
    H = face.height;
  let s = 0,
    n = 0;
  for (let y = Math.floor(H * 0.3); y < Math.ceil(H * 0.85); y++) {
    for (let x = Math.floor(W * 0.25); x < Math.ceil(W * 0.75); x++) {
      s += g[y * W + x];
      n++;
    }
  }
  return (s / n / 255) * 100;
}

/** Measurements the warnings and the quality score are computed from. */
interface FaceMeasurements {
  rectangle: { x: number; y: number; width: number; height: number };
  imageWidth: number;
  imageHeight: number;
  interEyeDistance: number;
  detectionScore: number;
  yaw?: number;
  pitch?: number;
  roll?: number;
  /** Eye openness 0..100 per eye. */
  eyesOpen?: { left: number; right: number };
  /** Passive liveness 0..100. */
  livenessScore?: number;
  sharpness: number;
  brightness: number;
}

const clamp01 = (v: number) => (v < 0 ? 0 : v > 1 ? 1 : v);

/**
 * Quality 0..100, a product of factors each in 0..1: face size (inter-eye distance), pose (yaw, pitch, roll),
 * sharpness, exposure, detector confidence and open eyes. A frontal, sharp, well-lit portrait scores 80-100; a
 * profile, a face under about 10 px between the eyes or one blurred to a sharpness under about 7 falls below the
 * default gate of 50.
 */
export function qualityScore(m: FaceMeasurements): number {
  const f = qualityFactors(m);
  return Math.round(100 * f.size * f.pose * f.sharpness * f.exposure * f.detection * f.eyes);
}

/** Inter-eye distance (px) from which a face's size costs no quality, and at which its size factor is 0. */
const SIZE_FULL_PX = 16;
const SIZE_ZERO_PX = 8;
/** Sharpness (`sharpness`, 0..100) from which blur costs no quality, and at which its factor is 0. */
const SHARPNESS_FULL = 16;
const SHARPNESS_ZERO = 4;

/** The factors of `qualityScore`, each 0..1 (1 = no loss): what a refusal names as the reason. */
export function qualityFactors(
  m: FaceMeasurements,
): Record<'size' | 'pose' | 'sharpness' | 'exposure' | 'detection' | 'eyes', number> {
  return {
    // Size and sharpness ramp between the points measured on faces-dev (scripts/eval-quality.ts,
    // docs/extraction.md): genuine pairs hold at 16 px between the eyes and a sharpness of 16, and collapse
    // towards 8 px and a sharpness of 4. The square root puts the factor at 0.5, alone enough for the default
    // gate to refuse, where they start to fail: 10 px and a sharpness of 7.
    size: Math.sqrt(clamp01((m.interEyeDistance - SIZE_ZERO_PX) / (SIZE_FULL_PX - SIZE_ZERO_PX))),
    pose:
      m.yaw === undefined
        ? 1
        : clamp01(1 - (m.yaw / 60) ** 2) * clamp01(1 - (m.pitch! / 50) ** 2) * clamp01(1 - (m.roll! / 60) ** 2),
    sharpness: Math.sqrt(clamp01((m.sharpness - SHARPNESS_ZERO) / (SHARPNESS_FULL - SHARPNESS_ZERO))),
    exposure: clamp01(1 - (Math.abs(m.brightness - 55) - 20) / 40),
    detection: clamp01((m.detectionScore - 0.5) / 0.45),
    eyes: m.eyesOpen ? 0.6 + 0.4 * clamp01(Math.min(m.eyesOpen.left, m.eyesOpen.right) / 50) : 1,
  };
}

/** The ICAO-style warnings of one face under `s`. */
export function faceWarnings(m: FaceMeasurements, s: FaceCheckSettings): IcaoWarning[] {
  const w: IcaoWarning[] = [];
  if (m.yaw !== undefined) {
    if (m.yaw < -s.maxYaw) w.push('YAW_LEFT');
    if (m.yaw > s.maxYaw) w.push('YAW_RIGHT');
    if (m.pitch! > s.maxPitch) w.push('PITCH_UP');
    if (m.pitch! < -s.maxPitch) w.push('PITCH_DOWN');
    if (m.roll! < -s.maxRoll) w.push('ROLL_LEFT');
    if (m.roll! > s.maxRoll) w.push('ROLL_RIGHT');
  }
  const r = m.rectangle;
  if (r.height / m.imageHeight > s.maxFaceHeightRatio) w.push('TOO_NEAR');
  if (m.interEyeDistance < s.minInterEyeDistance) w.push('TOO_FAR');
  const cx = (r.x + r.width / 2) / m.imageWidth - 0.5;
  const cy = (r.y + r.height / 2) / m.imageHeight - 0.5;
  if (cy < -s.maxCentreOffset) w.push('TOO_NORTH');
  if (cy > s.maxCentreOffset) w.push('TOO_SOUTH');
  if (cx > s.maxCentreOffset) w.push('TOO_EAST');
  if (cx < -s.maxCentreOffset) w.push('TOO_WEST');
  if (m.eyesOpen && Math.min(m.eyesOpen.left, m.eyesOpen.right) < s.minEyeOpen) w.push('EYES_CLOSED');
  if (m.sharpness < s.minSharpness) w.push('BLURRED');
  if (m.brightness < s.minBrightness) w.push('UNDEREXPOSED');
  if (m.brightness > s.maxBrightness) w.push('OVEREXPOSED');
  if (m.livenessScore !== undefined && m.livenessScore < s.minLiveness) w.push('LIVENESS');
  return w;
}
