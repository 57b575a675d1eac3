import { json } from '../../db/json.js';
import type { GalleryTemplate } from '../../db/repositories/gallery.js';
import type { Queryable } from '../../db/repositories/queryable.js';
import {
  insertFaceSample,
  insertImage,
  insertSubjectTemplate,
  insertVoiceSample,
} from '../../db/repositories/enrolment.js';
import type { AcceptedFace } from '../biometrics/face-samples.js';
import { voiceSampleRow, type AcceptedVoice } from '../biometrics/voice-samples.js';

/** What an accepted enrolment stores for its subject, beside the subject row and the operation. */
interface EnrolledSamples {
  subjectRef: number;
  /** The subject's client identifier (the gallery names its templates with it). */
  subjectId: string;
  operationUuid: string;
  at: Date;
  /** The subject's template version (its face version; a voice-only subject's voice version). */
  templateVersion: string;
  faces: readonly AcceptedFace[];
  /** Exported face templates given instead of (or beside) images, already checked to be of the current version. */
  importedTemplates: readonly Uint8Array[];
  voices: readonly AcceptedVoice[];
  /** Every recording's embedding averaged, of the voice template version; null without voice. */
  voiceTemplate: { version: string; template: Uint8Array; quality: number } | null;
}

/** What storing the samples answers. */
interface StoredSamples {
  /** The compact face template (that of the best-quality face), or null when no image was given. */
  compact: Uint8Array | null;
  /**
   * The subject's gallery templates as the database now holds them, were it ENROLLED: each face sample's
   * template, then the VOICE template, in row id order (what a replay of the change log would read).
   */
  gallery: GalleryTemplate[];
}

/**
 * Store an enrolment's samples in its transaction: each face's original and token image and its sample, the
 * imported templates as samples without image, the voice samples, then the subject's templates.
 */
export async function storeSamples(trx: Queryable, samples: EnrolledSamples): Promise<StoredSamples> {
  const { subjectRef, subjectId, operationUuid, at, templateVersion, faces, importedTemplates, voices, voiceTemplate } =
    samples;
  const gallery: GalleryTemplate[] = [];
  const galleryTemplate = (source: 'face' | 'voice', rowId: number, template: Uint8Array) =>
    gallery.push({ source, rowId, subjectRef, subjectId, template });
  for (const face of faces) {
    const originalId = await insertImage(trx, {
      operation_uuid: operationUuid,
      subject_ref: subjectRef,
      kind: 'ORIGINAL',
      format: face.analysis.format.toUpperCase(),
      width: face.analysis.width,
      height: face.analysis.height,
      bytes: face.bytes,
      created_at: at,
    });
    // The token image is made from the original and the face's landmarks when first read (token-images.ts).
    await insertImage(trx, {
      operation_uuid: operationUuid,
      subject_ref: subjectRef,
      kind: 'TOKEN',
      format: 'PNG',
      width: 240,
      height: 320,
      bytes: null,
      source_image_id: originalId,
      created_at: at,
    });
    const f = face.face;
    const sampleId = await insertFaceSample(trx, {
      subject_ref: subjectRef,
      operation_uuid: operationUuid,
      image_id: originalId,
      rectangle: json(roundRect(f.rectangle)),
      landmarks: json(f.landmarks),
      yaw: finite(f.yaw),
      pitch: finite(f.pitch),
      roll: finite(f.roll),
      quality: finite(f.quality),
      liveness_score: finite(f.livenessScore),
      template_version: templateVersion,
      template: face.template,
      created_at: at,
    });
    galleryTemplate('face', sampleId, face.template);
  }
  for (const template of importedTemplates) {
    const sampleId = await insertFaceSample(trx, {
      subject_ref: subjectRef,
      operation_uuid: operationUuid,
      image_id: null,
      rectangle: json({ x: 0, y: 0, width: 0, height: 0 }),
      landmarks: json(null),
      template_version: templateVersion,
      template,
      created_at: at,
    });
    galleryTemplate('face', sampleId, template);
  }
  for (const voice of voices) {
    await insertVoiceSample(trx, voiceSampleRow(voice, { subjectRef: subjectRef, operationUuid, at }));
  }
  // The subject's compact template (QR codes, exports): that of its best-quality face.
  const compact = faces.length ? faces.reduce((a, b) => (b.face.quality > a.face.quality ? b : a)) : null;
  if (faces.length || importedTemplates.length) {
    await insertSubjectTemplate(trx, {
      subject_ref: subjectRef,
      modality: 'FACE',
      template_version: templateVersion,
      data: compact?.template ?? importedTemplates[0]!,
      quality: compact ? finite(compact.face.quality) : null,
      created_at: at,
    });
  }
  // The subject's voice template: every recording's embedding averaged. The gallery matches against it.
  if (voiceTemplate) {
    const templateId = await insertSubjectTemplate(trx, {
      subject_ref: subjectRef,
      modality: 'VOICE',
      template_version: voiceTemplate.version,
      data: voiceTemplate.template,
      quality: voiceTemplate.quality,
      created_at: at,
    });
    galleryTemplate('voice', templateId, voiceTemplate.template);
  }
  return { compact: compact?.template ?? null, gallery };
}

function finite(value: number): number | null {
  return Number.isFinite(value) ? value : null;
}

function roundRect(r: { x: number; y: number; width: number; height: number }) {
  return { x: Math.round(r.x), y: Math.round(r.y), width: Math.round(r.width), height: Math.round(r.height) };
}
