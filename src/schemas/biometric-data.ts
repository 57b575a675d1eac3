import { binary, queryList, z } from './common.js';
import { SubjectIdString, TemplateVersion, dateTime, idParam, numericId, score, uuid } from './primitives.js';

/**
 * Stored samples (seed sections 4.3 and 4.4): face data, voice data and images, and the manifest of the
 * ZIP files that download them. Bytes never travel in these models; the download operations serve them.
 */

export const Rectangle = z
  .object({
    x: z.number().int().openapi({ description: 'Left edge in pixels' }),
    y: z.number().int().openapi({ description: 'Top edge in pixels' }),
    width: z.number().int().min(0),
    height: z.number().int().min(0),
  })
  .openapi('Rectangle', { description: 'A face box in image pixels' });

export const ImageKind = z.enum(['ORIGINAL', 'TOKEN', 'FACE_CROP']);

export const Image = z
  .object({
    id: numericId,
    uuid: uuid.openapi({ description: 'UUID of the operation that stored the image' }),
    subjectId: SubjectIdString.optional(),
    kind: ImageKind.openapi({ description: 'ORIGINAL as sent, TOKEN (normalised ICAO-style token image) or FACE_CROP' }),
    format: z.enum(['jpeg', 'png']),
    width: z.number().int().min(0),
    height: z.number().int().min(0),
    sizeBytes: z.number().int().min(0),
    createdAt: dateTime,
  })
  .openapi('Image', { description: 'A stored image; its bytes are served by the download operations' });

export const BiometricFaceData = z
  .object({
    id: numericId,
    uuid: uuid.openapi({ description: 'UUID of the operation that produced the face data' }),
    subjectId: SubjectIdString.optional(),
    imageId: numericId.openapi({ description: 'The image the face was found in' }),
    rectangle: Rectangle,
    yaw: z.number(),
    pitch: z.number(),
    roll: z.number(),
    quality: score,
    livenessScore: score.optional(),
    templateVersion: TemplateVersion,
    createdAt: dateTime,
  })
  .openapi('BiometricFaceData', { description: 'One detected face with its pose, quality and template version' });

export const BiometricVoiceData = z
  .object({
    id: numericId,
    uuid: uuid.openapi({ description: 'UUID of the operation that produced the voice data' }),
    subjectId: SubjectIdString.optional(),
    durationMs: z.number().int().min(0),
    sampleRate: z.number().int().positive(),
    quality: score,
    speechRatio: z.number().min(0).max(1).openapi({ description: 'Share of the recording that is speech' }),
    templateVersion: TemplateVersion,
    createdAt: dateTime,
  })
  .openapi('BiometricVoiceData', { description: 'One stored voice recording with its quality and template version' });

export const SessionDownload = z
  .object({
    fileName: z.string().openapi({ example: 'bims-subjects-20260101T120000Z.zip' }),
    contentType: z.string().openapi({ example: 'application/zip' }),
    size: z.number().int().min(0).openapi({ description: 'Total bytes of the entries' }),
    entries: z.array(
      z.object({
        path: z.string().openapi({ example: 'citizen-000123/face-1.jpg' }),
        contentType: z.string(),
        size: z.number().int().min(0),
        subjectId: SubjectIdString.optional(),
        uuid: uuid.optional(),
        imageId: numericId.optional(),
      }),
    ),
  })
  .openapi('SessionDownload', {
    description: 'Describes a download: the `manifest.json` inside the ZIP, or the answer on `Accept: application/json`',
  });

// ---- request parameters -------------------------------------------------------------------------------

export const IdQuery = z.strictObject({ id: idParam });
export const ImageIdQuery = z.strictObject({ id: idParam.openapi({ description: 'Image identifier' }) });
export const UuidQuery = z.strictObject({ uuid });
export const ImageByIdQuery = z.strictObject({
  id: idParam.openapi({ description: 'Image identifier' }),
  operationId: idParam.openapi({ description: 'Identifier of the operation the image belongs to' }),
});
export const IdParams = z.strictObject({ id: idParam });
export const UuidParams = z.strictObject({ uuid });
export const SubjectIdParams = z.strictObject({ subjectId: SubjectIdString });

/** Bulk downloads: `ids=1,2,3` or repeated `ids`. */
const listOf = (what: string, example: string) => ({
  description: `${what}, at most 1000: comma-separated (ids=a,b) or repeated (ids=a&ids=b)`,
  example,
});
export const NumericIdsQuery = z.strictObject({ ids: queryList(idParam).openapi(listOf('Numeric identifiers', '1,2,3')) });
export const UuidsQuery = z.strictObject({
  ids: queryList(uuid).openapi(listOf('Operation UUIDs', '0f8fad5b-d9cb-469f-a165-70867728950e')),
});
export const SubjectIdsQuery = z.strictObject({ ids: queryList(SubjectIdString).openapi(listOf('Subject identifiers (subjectId)', 'alice,bob')) });

/** A ZIP download, or its manifest on `Accept: application/json`. */
export const zipDownload = (description: string) => ({
  description: `${description}: a ZIP with the files and a manifest.json, or the manifest alone on Accept: application/json`,
  schema: SessionDownload,
  content: { 'application/zip': binary },
});
