import { pagingQuery, z } from './common.js';
import { Rectangle } from './biometric-data.js';
import {
  FaceImage,
  Modality,
  idParam,
  matchScore,
  SubjectIdString,
  TemplateBytes,
  createdRange,
  dateTime,
  faceSamples,
  numericId,
  score,
  uuid,
  voiceSamples,
} from './primitives.js';

/**
 * Biometric operations (seed section 4.10): the Operation record every enrolment, verification,
 * identification, check and re-extraction leaves behind, and the requests that create them.
 */

export const OperationType = z.enum(['ENROLL', 'VERIFY', 'IDENTIFY', 'CHECK', 'REMOTE_VERIFY', 'REEXTRACT']);
export const OperationStatus = z.enum([
  'SUCCESS',
  'MATCH_NOT_FOUND',
  'DUPLICATE_FOUND',
  'PENDING_ADJUDICATION',
  'NO_FACE_DETECTED',
  'MULTIPLE_FACES',
  'QUALITY_CHECK_FAILED',
  'LIVENESS_CHECK_FAILED',
  'FAILED',
]);
const IcaoWarning = z.enum([
  'YAW_LEFT',
  'YAW_RIGHT',
  'PITCH_UP',
  'PITCH_DOWN',
  'ROLL_LEFT',
  'ROLL_RIGHT',
  'TOO_NEAR',
  'TOO_FAR',
  'TOO_NORTH',
  'TOO_SOUTH',
  'TOO_EAST',
  'TOO_WEST',
  'EYES_CLOSED',
  'BLURRED',
  'UNDEREXPOSED',
  'OVEREXPOSED',
  'LIVENESS',
]);

export const CandidateData = z
  .object({
    subjectId: SubjectIdString,
    score: matchScore.openapi({ description: 'Fused score on the false-acceptance scale' }),
    scores: z
      .object({ FACE: matchScore.optional(), VOICE: matchScore.optional() })
      .openapi({ description: 'Score per modality' }),
    rank: z.number().int().min(1).optional(),
  })
  .openapi('CandidateData', { description: 'A gallery subject that matched a probe' });

/** The face checks of one image; unnamed so that Operation (also on the user surface) can embed it inline. */
export const ChecksFromImageShape = z.object({
  faceCount: z.number().int().min(0),
  faces: z.array(
    z.object({
      rectangle: Rectangle,
      landmarks: z
        .array(z.object({ x: z.number(), y: z.number() }))
        .openapi({ description: 'Five points: eye centres, nose tip, mouth corners' }),
      yaw: z
        .number()
        .optional()
        .openapi({ description: 'Head pose in degrees; absent when the pose was not measured (fast probe analysis)' }),
      pitch: z.number().optional(),
      roll: z.number().optional(),
      eyesOpen: z
        .object({ left: score, right: score })
        .optional()
        .openapi({ description: 'Openness of each eye, 0 (closed) to 100' }),
      livenessScore: score.optional(),
      quality: score,
      sharpness: score,
      brightness: score,
      estimatedAge: z.number().min(0).optional(),
      gender: z
        .enum(['MALE', 'FEMALE'])
        .optional()
        .openapi({ description: 'From a weak model (about 85% correct); a hint, never evidence' }),
      icaoWarnings: z.array(IcaoWarning).openapi({ description: 'Warnings of this face' }),
    }),
  ),
  icaoWarnings: z.array(IcaoWarning),
  passed: z.boolean().openapi({ description: 'True when exactly one face passed every configured gate' }),
});
export const ChecksFromImage = ChecksFromImageShape.openapi('ChecksFromImage', {
  description: 'Detection, pose, quality, liveness and ICAO-style checks of one image',
});

export const Operation = z
  .object({
    id: numericId,
    uuid,
    type: OperationType,
    status: OperationStatus,
    subjectId: SubjectIdString.optional(),
    modalities: z.array(Modality),
    score: matchScore.optional(),
    threshold: matchScore.optional(),
    candidates: z.array(CandidateData).optional(),
    checks: ChecksFromImageShape.optional(),
    durationMs: z.number().int().min(0),
    createdAt: dateTime,
    accountId: numericId.optional(),
    surface: z.enum(['admin', 'root', 'user']),
  })
  .openapi('Operation', { description: 'One biometric operation, as recorded' });

const operationOptions = z.strictObject({
  threshold: matchScore.optional().openapi({ description: 'Overrides matching.threshold for this operation' }),
  maxCandidates: z
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .openapi({ description: 'IDENTIFY: overrides identify.maxCandidates' }),
  checkIcao: z.boolean().optional(),
  detectLiveness: z.boolean().optional(),
});

export const CreateOperationRequest = z
  .strictObject({
    type: z.enum(['VERIFY', 'IDENTIFY', 'CHECK']).openapi({
      description:
        'VERIFY (1:1 against subjectId), IDENTIFY (1:N over the gallery) or CHECK (quality and liveness only). Enrolment is createSubject.',
    }),
    subjectId: SubjectIdString.optional().openapi({ description: 'Required for VERIFY' }),
    faces: faceSamples.optional(),
    voices: voiceSamples.optional(),
    options: operationOptions.optional(),
  })
  .refine((v) => v.type !== 'VERIFY' || v.subjectId !== undefined, {
    path: ['subjectId'],
    message: 'is required for VERIFY',
  })
  .refine((v) => (v.faces?.length ?? 0) + (v.voices?.length ?? 0) > 0, {
    path: ['faces'],
    message: 'give at least one face or voice sample',
  })
  .refine((v) => v.type !== 'CHECK' || v.voices === undefined, {
    path: ['voices'],
    message: 'CHECK takes face images only',
  })
  // The refinements above as JSON Schema states them for tools.
  .openapi('CreateOperationRequest', {
    anyOf: [{ required: ['faces'] }, { required: ['voices'] }],
    allOf: [
      { if: { properties: { type: { const: 'VERIFY' } } }, then: { required: ['subjectId'] } },
      { if: { properties: { type: { const: 'CHECK' } } }, then: { not: { required: ['voices'] } } },
    ],
  } as object);

export const CheckImageRequest = z.strictObject({
  image: FaceImage,
  options: z.strictObject({ checkIcao: z.boolean().optional(), detectLiveness: z.boolean().optional() }).optional(),
});

export const RemoteVerifyRequest = z.strictObject({
  template: TemplateBytes.openapi({ description: 'The fresh template extracted on the device by the client SDK' }),
  encryptedTemplate: z
    .string()
    .min(1)
    .max(64 * 1024)
    .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]*){4}$/, 'must be a compact JWE')
    .openapi({ description: 'The enrolled template as a JWE the service made for itself at enrolment or export' }),
  subjectId: SubjectIdString.optional().openapi({
    description: 'When given, must match the subject inside the encrypted template',
  }),
});

export const RemoteVerifyResult = z.object({
  verified: z.boolean(),
  score: matchScore,
  threshold: matchScore,
  operationUuid: uuid,
  subjectId: SubjectIdString.optional(),
});

const operationFilter = {
  type: OperationType.optional(),
  status: OperationStatus.optional(),
  subjectId: SubjectIdString.optional().openapi({ description: 'Exact subject identifier' }),
  surface: z.enum(['admin', 'root', 'user']).optional(),
  accountId: idParam.optional(),
  ...createdRange,
  createdTo: createdRange.createdTo.openapi({
    description: 'Created at or before (ISO 8601); not before createdFrom (a 400 naming createdTo otherwise)',
  }),
};

/** A range whose start is after its end matches nothing: a client's mistake, refused naming `createdTo`. */
const orderedRange = <T extends z.ZodObject<any>>(schema: T) =>
  schema.refine(
    (v: { createdFrom?: Date; createdTo?: Date }) => !v.createdFrom || !v.createdTo || v.createdFrom <= v.createdTo,
    {
      path: ['createdTo'],
      message: 'must not be before createdFrom',
    },
  );

export const OperationsQuery = orderedRange(
  z.strictObject({
    ...operationFilter,
    ...pagingQuery(['id', 'createdAt', 'type', 'status', 'subjectId', 'score', 'durationMs']),
  }),
);
export const OperationsCountQuery = orderedRange(z.strictObject(operationFilter));

export const DeleteOperationsRequest = z.strictObject({ uuids: z.array(uuid).min(1).max(1000) });
