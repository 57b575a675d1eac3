import { z } from './common.js';
import { BiometricFaceData, BiometricVoiceData } from './biometric-data.js';
import { CandidateData, Operation } from './operations.js';
import {
  Modality,
  SubjectIdString,
  TemplateBytes,
  TemplateVersion,
  dateTime,
  faceSamples,
  numericId,
  score,
  uuid,
  voiceSamples,
} from './primitives.js';
import { SubjectStatus } from './subject-status.js';

/**
 * Subjects and templates (seed section 4.11): enrolled identities, their modalities, QR-code templates and
 * re-extraction.
 */

/** Free client metadata: a JSON object of at most 16 KiB when serialised. */
const Metadata = z
  .record(z.string().max(128), z.unknown())
  .refine((v) => JSON.stringify(v).length <= 16 * 1024, 'must be at most 16 KiB as JSON')
  .openapi({ description: 'Free JSON object kept with the subject (at most 16 KiB)' });

export const Subject = z
  .object({
    id: numericId.openapi({ description: 'Internal identifier' }),
    subjectId: SubjectIdString.openapi({ description: "The client's identifier, unique" }),
    status: SubjectStatus,
    modalities: z
      .array(Modality)
      .openapi({ description: 'FACE when it has face samples or a face template, VOICE likewise' }),
    templateVersion: TemplateVersion.optional().openapi({
      description: 'Absent only for a subject that holds no template',
    }),
    metadata: z.record(z.string(), z.unknown()),
    createdAt: dateTime,
    updatedAt: dateTime,
    enrollmentOperationUuid: uuid.optional(),
    faces: z.array(BiometricFaceData),
    voices: z.array(BiometricVoiceData),
    candidates: z.array(CandidateData).optional().openapi({
      description:
        'createSubject only: the gallery subjects that made this one REJECTED or PENDING_ADJUDICATION, best first',
    }),
    encryptedTemplate: z.string().optional().openapi({
      description:
        'createSubject only: the enrolled face template as a JWE only the service can open, for remoteVerify on a device',
    }),
  })
  .openapi('Subject');

const ModalityTemplate = <T extends z.ZodType>(sample: T) =>
  z.object({
    templateVersion: TemplateVersion,
    quality: score
      .optional()
      .openapi({ description: 'Quality of the modality (its best sample); absent when none was measured' }),
    samples: z.array(sample),
  });

export const MultimodalSubject = z
  .object({
    id: numericId,
    subjectId: SubjectIdString,
    status: SubjectStatus,
    metadata: z.record(z.string(), z.unknown()),
    createdAt: dateTime,
    updatedAt: dateTime,
    enrollmentOperationUuid: uuid.optional(),
    face: ModalityTemplate(BiometricFaceData).optional(),
    voice: ModalityTemplate(BiometricVoiceData).optional(),
  })
  .openapi('MultimodalSubject', {
    description: 'A subject grouped by modality, with per-modality quality and template version',
  });

export const SubjectId = z
  .object({ id: numericId, subjectId: SubjectIdString })
  .openapi('SubjectId', { description: 'An item of the subject identifier list' });

export const SubjectQRCode = z
  .object({
    subjectId: SubjectIdString,
    templateVersion: TemplateVersion,
    payloadType: z.enum(['SIGNED_TEMPLATE', 'ENCRYPTED_TEMPLATE']).optional().openapi({
      description:
        'What the code carries: the signed clear template (default), or the encrypted template (the JWE as ASCII) when the qrcode.clearTemplate setting is off',
    }),
    payload: z.string().openapi({
      format: 'byte',
      description: 'The bytes encoded in the code, base64: the signed compact template, or the JWE text (payloadType)',
    }),
    image: z.string().openapi({ format: 'byte', description: 'The QR code as PNG, base64' }),
    qrVersion: z
      .number()
      .int()
      .min(1)
      .max(40)
      .optional()
      .openapi({ description: 'QR version (size) of the code, byte mode, error correction M' }),
    encryptedTemplate: z.string().optional().openapi({
      description:
        'The same template as a JWE for the service, for remoteVerify, bound to the current enrolment and issued now',
    }),
  })
  .openapi('SubjectQRCode');

export const TemplateModalities = z
  .object({
    modalities: z.array(Modality),
    templateVersion: TemplateVersion,
    formatVersion: z.number().int().min(1),
    subjectId: SubjectIdString.optional().openapi({
      description: 'When the template names its subject (QR payloads do)',
    }),
    signed: z.boolean(),
    signatureValid: z.boolean().openapi({ description: 'False for an unsigned template or a bad signature' }),
    issuedAt: dateTime.optional().openapi({ description: 'When the service signed it (signed payloads)' }),
    expiresAt: dateTime
      .optional()
      .openapi({ description: 'Encrypted templates: when it stops verifying (absent: never)' }),
    encrypted: z.boolean().optional().openapi({
      description: 'True for an encrypted template (a QR payload when clear templates in QR codes are turned off)',
    }),
  })
  .openapi('TemplateModalities', { description: 'What a template or QR payload contains' });

export const EnrolledModalities = z
  .object({
    subjectId: SubjectIdString,
    status: SubjectStatus.optional().openapi({ description: 'Only ENROLLED subjects are matched against' }),
    modalities: z.array(Modality),
    templateVersion: TemplateVersion.optional(),
  })
  .openapi('EnrolledModalities', { description: 'The modalities a subject is enrolled in' });

export const CreateSubjectRequest = z
  .strictObject({
    subjectId: SubjectIdString,
    faces: faceSamples.optional(),
    voices: voiceSamples.optional(),
    template: TemplateBytes.optional().openapi({ description: 'An exported template to enrol instead of samples' }),
    metadata: Metadata.optional(),
    options: z
      .strictObject({
        deduplicate: z.boolean().default(true),
        checkIcao: z.boolean().default(false),
        detectLiveness: z.boolean().default(false).openapi({
          description:
            'Measure passive liveness and refuse a face below liveness.threshold, even when liveness.mode is NONE',
        }),
      })
      .optional(),
  })
  .refine((v) => v.faces !== undefined || v.voices !== undefined || v.template !== undefined, {
    path: ['faces'],
    message: 'give faces, voices or a template',
  })
  // The refinement above, as JSON Schema states it for tools: at least one of the three.
  .openapi('CreateSubjectRequest', {
    anyOf: [{ required: ['faces'] }, { required: ['voices'] }, { required: ['template'] }],
  });

export const ReextractSubjectRequest = z
  .strictObject({
    subjectId: SubjectIdString.optional().openapi({
      description: 'Re-extract this stored subject from its stored original images',
    }),
    template: TemplateBytes.optional().openapi({
      description: 'An old template (format v1, base64) to replace by one made from new samples that match it',
    }),
    faces: faceSamples.optional().openapi({ description: 'With `template`: new face samples of its owner' }),
    voices: voiceSamples.optional().openapi({
      description:
        "Not taken: a template is re-extracted from new faces (422 naming the field); a stored subject's voices are re-extracted with `subjectId`",
    }),
  })
  .refine((v) => (v.subjectId === undefined) !== (v.template === undefined), {
    path: ['subjectId'],
    message: 'give exactly one of subjectId and template',
  })
  .refine((v) => v.subjectId === undefined || (v.faces === undefined && v.voices === undefined), {
    path: ['faces'],
    message: 'a stored subject is re-extracted from its stored samples; new samples go only with a template',
  })
  .refine((v) => v.template === undefined || v.faces !== undefined || v.voices !== undefined, {
    path: ['faces'],
    message: 'an old template needs a new sample that matches it',
  })
  .openapi('ReextractSubjectRequest', {
    // The refinements above for tools: a stored subject alone, or a template with new samples.
    oneOf: [
      {
        required: ['subjectId'],
        not: { anyOf: [{ required: ['template'] }, { required: ['faces'] }, { required: ['voices'] }] },
      },
      {
        required: ['template'],
        not: { required: ['subjectId'] },
        anyOf: [{ required: ['faces'] }, { required: ['voices'] }],
      },
    ],
    description:
      'Either a stored subject (`subjectId`: re-extracted from its stored original images) or an old template plus new samples (`template` and `faces`), accepted only if every sample matches the template; templates of another version than the current one cannot be compared, so that mode needs a template of the current version',
  });

export const ReextractSubjectResult = z.object({
  operation: Operation,
  subject: Subject.optional().openapi({ description: '`subjectId` mode: the re-extracted stored subject' }),
  template: z.string().optional().openapi({
    format: 'byte',
    description: '`template` mode: the new template (format v1, base64), made from the best-quality new sample',
  }),
  templateVersion: TemplateVersion,
});

export const GetTemplateModalitiesRequest = z
  .strictObject({
    template: TemplateBytes.optional().openapi({ description: 'An exported template or a QR code payload' }),
    payload: TemplateBytes.optional().openapi({ description: 'A QR code payload (the same as `template`)' }),
  })
  .refine((v) => (v.template === undefined) !== (v.payload === undefined), {
    path: ['template'],
    message: 'give exactly one of template and payload',
  })
  .openapi('GetTemplateModalitiesRequest', {
    description: 'An exported template or a QR code payload: exactly one of `template` and `payload`',
    oneOf: [{ required: ['template'] }, { required: ['payload'] }],
  });
