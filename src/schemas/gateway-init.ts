import { z } from './common.js';
import { Modality, SubjectIdString, matchScore, score } from './primitives.js';

/**
 * The init params of a media gateway session (seed section 4.7; docs/gateway-capture.md): what a capture is for,
 * its modalities, active liveness and the per-session overrides of the biometric settings. gateway.ts holds the
 * rest of the gateway's models and re-exports these.
 */

// ---- init params of a session ---------------------------------------------------------------------------

export const Purpose = z
  .enum(['ENROLL', 'VERIFY', 'IDENTIFY', 'CHECK'])
  .openapi({ description: 'What the session does with the captured samples' });

/** The instructions of active liveness (docs/gateway-capture.md): the subject's own left and right, not the picture's. */
const ActiveChallenge = z.enum(['TURN_LEFT', 'TURN_RIGHT', 'BLINK']);

const ActiveLivenessParams = z
  .strictObject({
    challenges: z.number().int().min(1).max(3).default(2).openapi({
      description:
        'How many instructions the subject must follow, each picked at random by the service once a face is tracked',
    }),
    kinds: z
      .array(ActiveChallenge)
      .min(1)
      .max(3)
      .default(['TURN_LEFT', 'TURN_RIGHT', 'BLINK'])
      .refine((kinds) => new Set(kinds).size === kinds.length, 'must not repeat a kind')
      .openapi({
        uniqueItems: true,
        description:
          "The instructions to pick from: TURN_LEFT and TURN_RIGHT (the subject's own left and right), BLINK",
      }),
    challengeSeconds: z
      .number()
      .int()
      .min(3)
      .max(30)
      .default(8)
      .openapi({ description: 'Time to follow one instruction, from the moment it is given' }),
    retries: z.number().int().min(0).max(3).default(1).openapi({
      description:
        'Instructions that may be failed (not followed in time, the other way, or the face lost or changed) before the session ends with LIVENESS_CHECK_FAILED',
    }),
  })
  .openapi({
    description:
      'Active liveness: after the passive checks, the subject follows random instructions (turn the head, blink), checked on the following frames of the same tracked face. Absent: none',
  });

const commonInit = {
  purpose: Purpose,
  subjectId: SubjectIdString.optional().openapi({
    description: 'ENROLL: the new subject; VERIFY: the claimed subject',
  }),
  checkIcao: z.boolean().default(false),
  detectLiveness: z.boolean().default(true),
  timeoutSeconds: z.number().int().min(5).max(600).default(60).openapi({
    description: 'The session ends with TIMEOUT when no result is reached within this many seconds of the connect',
  }),
  framesPerSecond: z
    .number()
    .int()
    .min(1)
    .max(15)
    .default(5)
    .openapi({ description: 'How many video frames per second are sampled from the stream and analysed' }),
  selectFrames: z.number().int().min(1).max(5).default(1).openapi({
    description:
      'How many of the best frames that pass the gates are used for the operation (and stored, for ENROLL, VERIFY and IDENTIFY)',
  }),
  livenessFrames: z.number().int().min(1).max(10).default(3).openapi({
    description:
      'How many tracked frames passive liveness is averaged over before the operation runs (when a liveness gate applies)',
  }),
  activeLiveness: ActiveLivenessParams.optional(),
};

/** Per-session overrides of the biometric settings (the keys of the settings registry that a session may change). */
const biometricOverrides = z
  .strictObject({
    'matching.threshold': matchScore.optional(),
    'quality.face.minimum': score.optional(),
    'liveness.mode': z.enum(['NONE', 'PASSIVE']).optional(),
    'liveness.threshold': score.optional(),
    'identify.maxCandidates': z.number().int().min(1).max(100).optional(),
    'deduplication.duplicateThreshold': matchScore.optional(),
    'deduplication.adjudicationThreshold': matchScore.optional(),
  })
  .openapi({ description: 'Overrides of biometric settings for this session only' });

export const FVInitParams = z
  .strictObject({ kind: z.literal('FV'), ...commonInit })
  .openapi('FVInitParams', { description: 'Face session: capture faces from the video track' });

export const FVAdvancedInitParams = z
  .strictObject({ kind: z.literal('FV_ADVANCED'), ...commonInit, overrides: biometricOverrides })
  .openapi('FVAdvancedInitParams', {
    description: 'FVInitParams plus per-session overrides of the biometric settings',
  });

const voiceInit = {
  modalities: z.array(Modality).min(1).default(['FACE', 'VOICE']),
  phrase: z.string().max(256).optional().openapi({ description: 'A phrase the subject is asked to say' }),
  minSpeechMs: z.number().int().min(500).max(60_000).default(3000),
};

export const MultimodalInitParams = z
  .strictObject({ kind: z.literal('MULTIMODAL'), ...commonInit, ...voiceInit })
  .openapi('MultimodalInitParams', {
    description: 'Face and voice session: capture faces from video and speech from audio',
  });

export const MultimodalAdvancedInitParams = z
  .strictObject({ kind: z.literal('MULTIMODAL_ADVANCED'), ...commonInit, ...voiceInit, overrides: biometricOverrides })
  .openapi('MultimodalAdvancedInitParams', {
    description: 'MultimodalInitParams plus per-session overrides of the biometric settings',
  });

export const InitParams = z.discriminatedUnion('kind', [
  FVInitParams,
  FVAdvancedInitParams,
  MultimodalInitParams,
  MultimodalAdvancedInitParams,
]);

/** What each purpose needs of the subjectId, and which purposes take voice: checked before any media flows. */
export function checkPurpose(params: z.output<typeof InitParams>, ctx: z.RefinementCtx): void {
  const needsSubject = params.purpose === 'ENROLL' || params.purpose === 'VERIFY';
  if (needsSubject && params.subjectId === undefined) {
    ctx.addIssue({ code: 'custom', path: ['params', 'subjectId'], message: `is required for ${params.purpose}` });
  }
  if (!needsSubject && params.subjectId !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['params', 'subjectId'],
      message: `is only for ENROLL and VERIFY, not ${params.purpose}`,
    });
  }
  if (params.purpose === 'CHECK' && 'modalities' in params && params.modalities.includes('VOICE')) {
    ctx.addIssue({ code: 'custom', path: ['params', 'modalities'], message: 'CHECK takes faces only' });
  }
  if (params.activeLiveness && 'modalities' in params && !params.modalities.includes('FACE')) {
    ctx.addIssue({ code: 'custom', path: ['params', 'activeLiveness'], message: 'needs the FACE modality' });
  }
}
