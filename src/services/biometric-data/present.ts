import type {
  FaceDataRow as FaceData,
  ImageInfoRow as ImageInfo,
  VoiceDataRow as VoiceData,
} from '../../db/repositories/biometric-data/samples.js';

/**
 * Rows of the sample tables as the `Image`, `BiometricFaceData` and `BiometricVoiceData` models show them.
 * The repository's selects never read template or sample bytes, and these functions copy named fields
 * only, so neither can reach a response even if a row type grows.
 */

/**
 * What the presenters take: the rows of db/repositories/biometric-data/samples.ts. The face and voice rows'
 * `created_at` may also be text: the one-statement subject reads (services/subjects/one-query.ts) hand theirs
 * over from JSON.
 */
type ShownAt = { created_at: Date | string };
type ImageInfoRow = ImageInfo;
export type FaceDataRow = Omit<FaceData, 'created_at'> & ShownAt;
export type VoiceDataRow = Omit<VoiceData, 'created_at' | 'size'> & ShownAt & { size?: number };

const iso = (at: Date | string) => new Date(at).toISOString();

/** A measure when it was taken: `real` columns may hold NULL, or NaN when a check was switched off. */
function measured<K extends string>(key: K, value: number | null): { [P in K]?: number } {
  return value !== null && Number.isFinite(value) ? ({ [key]: value } as { [P in K]: number }) : {};
}

/** Formats are stored upper-case ('JPEG' | 'PNG'); older rows or other writers may differ in case. */
export const imageFormat = (format: string) => format.toUpperCase();

/**
 * The `ImageFormat` of a stored image: only decoded images are stored, and only JPEG and PNG decode, so any
 * other value is a damaged row (an error on our side, logged), never shown as a format the model lacks.
 */
function knownImageFormat(format: string): 'JPEG' | 'PNG' {
  const upper = imageFormat(format);
  if (upper === 'JPEG' || upper === 'PNG') return upper;
  throw new Error(`Stored image has format ${JSON.stringify(format)}, neither JPEG nor PNG`);
}

export function presentImage(row: ImageInfoRow) {
  return {
    id: row.id,
    uuid: row.operation_uuid,
    ...(row.subject_id !== null ? { subjectId: row.subject_id } : {}),
    kind: row.kind,
    format: knownImageFormat(row.format),
    width: row.width,
    height: row.height,
    sizeBytes: row.size,
    createdAt: iso(row.created_at),
  };
}

/** Detectors give sub-pixel boxes; the `Rectangle` model is whole pixels. */
function presentRectangle(r: FaceDataRow['rectangle']) {
  return {
    x: Math.round(r.x),
    y: Math.round(r.y),
    width: Math.max(0, Math.round(r.width)),
    height: Math.max(0, Math.round(r.height)),
  };
}

export function presentFaceData(row: FaceDataRow) {
  return {
    id: row.id,
    uuid: row.operation_uuid,
    ...(row.subject_id !== null ? { subjectId: row.subject_id } : {}),
    ...(row.image_id !== null ? { imageId: row.image_id } : {}),
    rectangle: presentRectangle(row.rectangle),
    ...measured('yaw', row.yaw),
    ...measured('pitch', row.pitch),
    ...measured('roll', row.roll),
    ...measured('quality', row.quality),
    ...measured('livenessScore', row.liveness_score),
    templateVersion: row.template_version,
    createdAt: iso(row.created_at),
  };
}

export function presentVoiceData(row: VoiceDataRow) {
  return {
    id: row.id,
    uuid: row.operation_uuid,
    ...(row.subject_id !== null ? { subjectId: row.subject_id } : {}),
    durationMs: row.duration_ms,
    sampleRate: row.sample_rate,
    ...measured('quality', row.quality),
    ...measured('speechRatio', row.speech_ratio),
    templateVersion: row.template_version,
    createdAt: iso(row.created_at),
  };
}
