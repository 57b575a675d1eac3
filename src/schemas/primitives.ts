import { MAX_DB_ID, dbId, queryDate, queryId, z } from './common.js';
import { fromBase64 } from '../encoding/base64.js';
import faceModels from '../../wasm/models/manifest.json' with { type: 'json' };

/**
 * Building blocks shared by the biometric areas (subjects, operations, biometric data, adjudication,
 * gateway, licensing): identifiers, base64 payloads with size limits, modalities and time filters.
 */

/** The client's subject identifier: 1-128 characters, no control characters (it appears in paths and file names). */
export const SubjectIdString = z
  .string()
  .min(1, 'must not be empty')
  .max(128, 'must be at most 128 characters')
  .regex(/^[^\u0000-\u001f\u007f]+$/, 'must not contain control characters')
  .openapi({ example: 'citizen-000123' });

/** A numeric identifier (a PostgreSQL integer row id) in a path or query string. */
export const idParam = queryId.openapi({ type: 'integer', minimum: 1, maximum: MAX_DB_ID, example: 42 });

/** A numeric identifier (a PostgreSQL integer row id) in a JSON body or response. */
export const numericId = dbId;

/** An operation UUID. */
export const uuid = z.uuid('must be a UUID').openapi({ example: '0f8fad5b-d9cb-469f-a165-70867728950e' });

/** A timestamp in a response body (ISO 8601). */
export const dateTime = z.string().openapi({ format: 'date-time' });

/** 1 MiB: the unit of the size limits below. */
export const MiB = 1024 * 1024;

/** Padded RFC 4648 base64, as `z.base64()` checks it. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * A base64 (RFC 4648, padded) payload of at most `maxBytes` decoded bytes, kept as text: for a schema that also
 * describes an answer (`PacketBytes`), where bytes could not be written out as JSON. The length is checked first
 * so a huge string is refused before the alphabet is scanned.
 */
export function base64Text(maxBytes: number, description: string) {
  const maxChars = Math.ceil(maxBytes / 3) * 4;
  return z
    .string()
    .min(4, 'must not be empty')
    .max(maxChars, `must be at most ${maxBytes} bytes (${maxChars} base64 characters)`)
    .regex(BASE64, 'must be base64 (RFC 4648, padded)')
    .openapi(base64Document(maxChars, `${description}; at most ${maxBytes} bytes`));
}

const base64Document = (maxChars: number, description: string) => ({
  type: 'string' as const,
  format: 'byte',
  // JSON Schema 2020-12 keyword, not in the OpenAPI metadata's type.
  ...({ contentEncoding: 'base64' } as object),
  minLength: 4,
  maxLength: maxChars,
  // Padded RFC 4648 base64, as the server checks it; what the bytes must be is the description's to say.
  pattern: BASE64.source,
  description,
});

/**
 * Bytes of at most `maxBytes`: base64 text (RFC 4648, padded) in a JSON body, or the bytes themselves where the
 * HTTP layer already has them (a form's file part, a sample it decoded while a JSON body arrived). Either way
 * the services get a `Uint8Array`. The document states the JSON form: a base64 string. The length is checked
 * before the alphabet, so a huge string is refused before it is scanned.
 */
function base64Bytes(maxBytes: number, description: string) {
  const maxChars = Math.ceil(maxBytes / 3) * 4;
  const tooLong = `must be at most ${maxBytes} bytes (${maxChars} base64 characters)`;
  return z
    .custom<Uint8Array | string>((v) => v instanceof Uint8Array || typeof v === 'string', {
      error: (issue) => (issue.input === undefined ? 'is required' : 'must be a base64 string (RFC 4648, padded)'),
    })
    .superRefine((v, ctx) => {
      const size = v.length;
      const fail = (message: string) => ctx.addIssue({ code: 'custom', message, input: v });
      if (typeof v === 'string' ? size < 4 : size === 0) fail('must not be empty');
      else if (typeof v === 'string' ? size > maxChars : size > maxBytes) fail(tooLong);
      else if (typeof v === 'string' && !BASE64.test(v)) fail('must be base64 (RFC 4648, padded)');
    })
    .transform((v) => (typeof v === 'string' ? fromBase64(v) : v))
    .openapi(base64Document(maxChars, `${description}; at most ${maxBytes} bytes`));
}

/** Size limits of samples and templates carried in request bodies. */
const limits = {
  faceImageBytes: 10 * MiB,
  voiceAudioBytes: 10 * MiB,
  templateBytes: 64 * 1024,
  samplesPerModality: 10,
};

/** A face image, JPEG or PNG, base64, with the decoding bounds the server holds it to (docs/admission.md). */
export const FaceImage = base64Bytes(
  limits.faceImageBytes,
  'JPEG (Huffman baseline or progressive, 8-bit, grey, colour or CMYK) or PNG image, base64. What decoding it ' +
    'costs is judged from its structure before anything runs (docs/admission.md), each refusal a 400 naming the ' +
    'field: over BIMS_MAX_IMAGE_MEGAPIXELS (default 16) megapixels, reason IMAGE_TOO_LARGE; a JPEG of more than ' +
    '256 scans or 2048 marker segments, or whose scans would visit more blocks than 48 passes over the largest ' +
    'image admitted (CMYK weighs 8 times), or a PNG of more than 65,536 chunks, IMAGE_TOO_COSTLY; arithmetic, ' +
    'lossless, hierarchical or 12-bit JPEG, UNSUPPORTED_FORMAT; a PNG whose image data inflates past what its ' +
    'header implies, INVALID_IMAGE; a decode that runs past the budget its cost sets is stopped, ' +
    'DECODE_BUDGET_EXCEEDED',
);
/** A voice recording, WAV (PCM), base64. */
const VoiceAudio = base64Bytes(
  limits.voiceAudioBytes,
  'WAV recording (PCM or float, mono or stereo, 8 to 48 kHz) of at most 120 s (longer: 400 AUDIO_TOO_LONG), base64',
);
/** An exported template (our versioned binary format) or a QR code payload, base64. */
export const TemplateBytes = base64Bytes(limits.templateBytes, 'Exported template or QR payload, base64');

const FaceSample = z.strictObject({ image: FaceImage });
const VoiceSample = z.strictObject({ audio: VoiceAudio });
export const faceSamples = z.array(FaceSample).min(1).max(limits.samplesPerModality);
export const voiceSamples = z.array(VoiceSample).min(1).max(limits.samplesPerModality);

export const Modality = z.enum(['FACE', 'VOICE']);
/** The example is the version the shipped face models produce, so an example template version is one the service accepts. */
export const TemplateVersion = z
  .string()
  .max(128)
  .openapi({ description: 'Names the extractor models that made the template', example: faceModels.templateVersion });

/** A number in [0, 100]: qualities, liveness and other per-sample measures. */
export const score = z.number().min(0).max(100);

/**
 * A similarity score or threshold on the false-acceptance scale of biometrics.md (`-12 * log10(FAR)`:
 * 48 means FAR 0.01%), clamped to [0, 200].
 */
export const matchScore = z
  .number()
  .min(0)
  .max(200)
  .openapi({ description: 'On the false-acceptance scale: -12*log10(FAR), 0..200' });

/** `createdFrom` / `createdTo` filters (inclusive range of ISO 8601 timestamps). */
export const createdRange = {
  createdFrom: queryDate.optional().openapi({ description: 'Created at or after (ISO 8601)' }),
  createdTo: queryDate.optional().openapi({ description: 'Created at or before (ISO 8601)' }),
};

/** The answer of a delete or clear operation. */
export const DeletedCount = z
  .object({ deleted: z.number().int().min(0) })
  .openapi({ description: 'How many entries were removed' });
