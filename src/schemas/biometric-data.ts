import { MAX_DB_ID, binary, queryList, z } from './common.js';
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

const ImageKind = z.enum(['ORIGINAL', 'TOKEN', 'FACE_CROP']);
/** The stored encoding: originals keep the client's JPEG or PNG byte for byte; token images are PNG. */
const ImageFormat = z.enum(['JPEG', 'PNG']);

export const Image = z
  .object({
    id: numericId,
    uuid: uuid.openapi({ description: 'UUID of the operation that stored the image' }),
    subjectId: SubjectIdString.optional(),
    kind: ImageKind.openapi({
      description: 'ORIGINAL as sent, TOKEN (normalised ICAO-style token image) or FACE_CROP',
    }),
    format: ImageFormat,
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
    imageId: numericId
      .optional()
      .openapi({ description: 'The ORIGINAL image the face was found in (absent once that image is gone)' }),
    rectangle: Rectangle,
    yaw: z.number().optional().openapi({ description: 'Head pose in degrees; absent when not measured' }),
    pitch: z.number().optional(),
    roll: z.number().optional(),
    quality: score.optional(),
    livenessScore: score.optional().openapi({
      description:
        'Passive liveness 0..100; measured at enrolment only when liveness.mode is PASSIVE or the request set detectLiveness or checkIcao',
    }),
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
    quality: score.optional(),
    speechRatio: z.number().min(0).max(1).optional().openapi({ description: 'Share of the recording that is speech' }),
    templateVersion: TemplateVersion,
    createdAt: dateTime,
  })
  .openapi('BiometricVoiceData', { description: 'One stored voice recording with its quality and template version' });

/** What a file of a download holds: a stored image of one kind, a voice recording, or a subject record. */
const DownloadEntryKind = z.enum(['ORIGINAL', 'TOKEN', 'FACE_CROP', 'VOICE', 'SUBJECT']);

export const SessionDownload = z
  .object({
    fileName: z.string().openapi({ example: 'bims-subjects-20260101T120000Z.zip' }),
    contentType: z.string().openapi({ example: 'application/zip' }),
    size: z
      .number()
      .int()
      .min(0)
      .openapi({ description: 'Total bytes of the entries (manifest.json itself not counted)' }),
    createdAt: dateTime.optional(),
    entries: z.array(
      z.object({
        path: z.string().openapi({ example: 'subjects/citizen-000123/original-1.jpg' }),
        contentType: z.string(),
        size: z.number().int().min(0),
        kind: DownloadEntryKind.optional(),
        subjectId: SubjectIdString.optional(),
        uuid: uuid.optional(),
        imageId: numericId.optional(),
        voiceId: numericId.optional(),
        createdAt: dateTime.optional(),
      }),
    ),
  })
  .openapi('SessionDownload', {
    description:
      'Describes a download: the `manifest.json` inside the ZIP, or the answer on `Accept: application/json`',
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

/**
 * Bulk downloads: `ids=1,2,3` or repeated `ids`. Each list is limited to what a URL can carry: the Node entry
 * reads request heads of up to 64 KiB (src/runtime/http-server.ts), and a longer one is a 431 problem. 1,000
 * numeric ids as repeated `ids=` take 15 KB, 1,000 UUIDs 41 KB; 50 subjectIds of 128 characters, each
 * percent-encoded at its worst (9 bytes a character), 58 KB.
 */
const listOf = (what: string, example: string, items: Record<string, unknown>, max: number) => ({
  description: `${what}, at most ${max}: comma-separated (ids=a,b) or repeated (ids=a&ids=b). The request line and headers together may take 64 KiB (431 problem beyond); a proxy in front may allow less`,
  // The document states the list as what it is, an array serialised form-style without explode (a,b,c).
  type: 'array' as const,
  items,
  minItems: 1,
  maxItems: max,
  example: example.split(',').map((v) => (items.type === 'integer' ? Number(v) : v)),
  param: { style: 'form' as const, explode: false },
});
/** Most identifiers one bulk download names, by kind (what the URL can carry, above). */
export const LIST_LIMITS = { numericIds: 1000, uuids: 1000, subjectIds: 50 } as const;
export const NumericIdsQuery = z.strictObject({
  ids: queryList(idParam, LIST_LIMITS.numericIds).openapi(
    listOf('Numeric identifiers', '1,2,3', { type: 'integer', minimum: 1, maximum: MAX_DB_ID }, LIST_LIMITS.numericIds),
  ),
});
export const UuidsQuery = z.strictObject({
  ids: queryList(uuid, LIST_LIMITS.uuids).openapi(
    listOf(
      'Operation UUIDs',
      '0f8fad5b-d9cb-469f-a165-70867728950e',
      { type: 'string', format: 'uuid' },
      LIST_LIMITS.uuids,
    ),
  ),
});
export const SubjectIdsQuery = z.strictObject({
  // A comma separates items, so a subjectId holding one cannot be named in this list.
  ids: queryList(SubjectIdString, LIST_LIMITS.subjectIds).openapi(
    listOf(
      'Subject identifiers (subjectId)',
      'alice,bob',
      {
        type: 'string',
        minLength: 1,
        maxLength: 128,
        pattern: '^[^,\\u0000-\\u001f\\u007f]+$',
      },
      LIST_LIMITS.subjectIds,
    ),
  ),
});

/**
 * A ZIP download, or its manifest on `Accept: application/json`. The rules every download shares (file
 * layout, unknown identifiers, size cap) are written once here so each operation's document states them.
 */
export const zipDownload = (description: string) => ({
  description:
    `${description}: a ZIP (entries stored, not deflated) with the files and a manifest.json first, or the manifest alone on ` +
    'Accept: application/json. Files sit under subjects/{subjectId}/ (or operations/{uuid}/ for samples of no subject) as ' +
    '{kind}-{id}.{jpg|png|wav}; a subjectId that is not made only of letters, digits, "-" and "_" is cleaned and suffixed ' +
    'with "~{internal id}". Unknown identifiers: 404 naming all of them, nothing downloaded. More than ' +
    'BIMS_MAX_DOWNLOAD_BYTES of files (256 MiB by default): 422, ask for fewer identifiers.',
  schema: SessionDownload,
  content: { 'application/zip': binary },
});
