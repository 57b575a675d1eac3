import { z } from './common.js';
import { SubjectIdString, matchScore } from './primitives.js';
import { CandidateData } from './operations.js';
import { CaptureEvent } from './capture-events.js';
import { checkPurpose, InitParams, Purpose } from './gateway-init.js';

/**
 * The media gateway (seed section 4.7): real-time sessions on a Janus WebRTC gateway. "Gateway" is the
 * neutral word the seed uses in place of the product name. Janus's own answers keep Janus's snake_case field
 * names; our requests are camelCase.
 */

/** Janus session and handle identifiers: random integers that Janus keeps within 2^53 for JavaScript. */
const janusId = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const janusIdQuery = z.coerce
  .number({ message: 'must be an integer' })
  .int('must be an integer')
  .positive()
  .max(Number.MAX_SAFE_INTEGER);

export const Jsep = z
  .strictObject({
    type: z.enum(['offer', 'answer', 'pranswer', 'rollback']),
    sdp: z
      .string()
      .max(64 * 1024)
      .openapi({ description: 'Session description (SDP), at most 64 KiB' }),
    trickle: z.boolean().optional(),
    e2ee: z.boolean().optional(),
  })
  .openapi('Jsep', { description: 'A JavaScript Session Establishment Protocol message: an SDP offer or answer' });

export const SessionData = z
  .strictObject({
    sessionId: janusId,
    handleId: janusId.optional().openapi({ description: 'The plugin handle; absent to address the whole session' }),
  })
  .openapi('SessionData', { description: 'Addresses a gateway session, and optionally one plugin handle of it' });

export const ConnectData = z
  .strictObject({ sessionId: janusId, handleId: janusId, jsep: Jsep, params: InitParams })
  .superRefine((v, ctx) => checkPurpose(v.params, ctx))
  .openapi('ConnectData', { description: 'SessionData with the JSEP offer and the init params of the session' });

const IceCandidate = z.strictObject({
  candidate: z.string().max(1024),
  sdpMid: z.string().max(64).nullable().optional(),
  sdpMLineIndex: z.number().int().min(0).max(1024).nullable().optional(),
  usernameFragment: z.string().max(256).nullable().optional(),
});

export const TrickleData = z
  .strictObject({
    sessionId: janusId,
    handleId: janusId,
    candidate: IceCandidate.optional(),
    candidates: z.array(IceCandidate).min(1).max(100).optional(),
    completed: z.literal(true).optional().openapi({ description: 'No more candidates follow' }),
  })
  .refine((v) => [v.candidate, v.candidates, v.completed].filter((x) => x !== undefined).length === 1, {
    path: ['candidate'],
    message: 'give exactly one of candidate, candidates and completed',
  })
  // The refinement above as JSON Schema states it for tools: exactly one of the three.
  .openapi('TrickleData', {
    description: 'SessionData with ICE candidates to forward: exactly one of `candidate`, `candidates` and `completed`',
    oneOf: [{ required: ['candidate'] }, { required: ['candidates'] }, { required: ['completed'] }],
  });

// ---- Janus answers ------------------------------------------------------------------------------------

export const GatewayResponseError = z
  .object({ code: z.number().int(), reason: z.string() })
  .openapi('GatewayResponseError', { description: "The error part of the gateway's answer" });

export const GatewayResponseData = z
  .looseObject({
    id: janusId.optional().openapi({ description: 'The new session or handle identifier' }),
  })
  .openapi('GatewayResponseData', { description: "The data part of the gateway's answer" });

/** Janus's Jsep may carry fields we do not send; answers are read loosely. */
const JsepAnswer = z.looseObject({ type: z.enum(['offer', 'answer', 'pranswer', 'rollback']), sdp: z.string() });

/** A capture session as its client reads it in the answer to trickleGateway (docs/gateway-capture.md). */
const CaptureState = z
  .object({
    state: z.enum(['WAITING_MEDIA', 'CAPTURING', 'PROCESSING', 'DONE', 'TIMEOUT', 'FAILED']),
    purpose: Purpose,
    events: z.array(CaptureEvent).openapi({
      description:
        'Its events so far, oldest first: STARTED, MEDIA, guidance (NO_FACE, MOVE_CLOSER, ...), FACE_FOUND, PROCESSING, then DONE, TIMEOUT or FAILED',
    }),
    result: z
      .object({
        status: z.string().openapi({
          description: "The operation's status (SUCCESS, MATCH_NOT_FOUND ...), or TIMEOUT / FAILED when none ran",
        }),
        operationUuid: z.uuid().optional().openapi({ description: 'The operation in the log (getOperationByUUID)' }),
        subjectId: SubjectIdString.optional(),
        subjectStatus: z.string().optional().openapi({ description: "ENROLL: the new subject's status" }),
        score: matchScore.optional(),
        candidates: z.array(CandidateData).optional(),
        reason: z.string().optional().openapi({
          description:
            'Why the capture ended without an operation: a refusal code (TOO_DARK, TOO_FAR, TURNED_AWAY, EYES_CLOSED, TWO_FACES, NO_LIVE_PERSON, LOW_QUALITY; ACTIVE_LIVENESS_FAILED), or words (TIMEOUT, FAILED)',
        }),
        text: z.string().optional().openapi({ description: 'With a refusal code: why, in words a person acts on' }),
      })
      .optional()
      .openapi({ description: 'The outcome once there is one' }),
  })
  .openapi({ description: 'On the handle of a capture session: its state, events and outcome' });

export const GatewayResponse = z
  .looseObject({
    janus: z.string().openapi({ example: 'success', description: 'success, ack, event, error, ...' }),
    session_id: janusId.optional(),
    sender: janusId.optional(),
    transaction: z.string().optional(),
    data: GatewayResponseData.optional(),
    plugindata: z.object({ plugin: z.string(), data: z.record(z.string(), z.unknown()) }).optional(),
    jsep: JsepAnswer.optional().openapi({ description: 'A Jsep' }),
    error: GatewayResponseError.optional(),
    capture: CaptureState.optional(),
  })
  .openapi('GatewayResponse', { description: "The gateway's answer" });

export const GatewayStatus = z
  .looseObject({
    token_auth: z.boolean().optional(),
    api_secret: z.boolean().optional(),
    session_timeout: z.number().int().optional(),
    reclaim_session_timeout: z.number().int().optional(),
    candidates_timeout: z.number().int().optional(),
    log_level: z.number().int().optional(),
    log_timestamps: z.boolean().optional(),
    log_colors: z.boolean().optional(),
    locking_debug: z.boolean().optional(),
    refcount_debug: z.boolean().optional(),
    libnice_debug: z.boolean().optional(),
    min_nack_queue: z.number().int().optional(),
    'nack-optimizations': z.boolean().optional().openapi({ description: 'Spelt with a hyphen, as Janus sends it' }),
    no_media_timer: z.number().int().optional(),
    slowlink_threshold: z.number().int().optional(),
  })
  .openapi('GatewayStatus', { description: "The gateway's status as its Admin API reports it" });

export const GatewayAdminGetStatusResponse = z
  .looseObject({
    janus: z.string(),
    transaction: z.string().optional(),
    status: GatewayStatus.optional(),
    error: GatewayResponseError.optional(),
  })
  .openapi('GatewayAdminGetStatusResponse', {
    description: 'The Admin API answer to get_status (and to a settings change)',
  });

export const GatewayAdminSessionResponse = z
  .looseObject({
    janus: z.string(),
    transaction: z.string().optional(),
    session_id: janusId.optional(),
    handle_id: janusId.optional(),
    sessions: z.array(janusId).optional().openapi({ description: 'list_sessions: the live sessions' }),
    handles: z.array(janusId).optional().openapi({ description: 'list_handles: the handles of a session' }),
    info: z.record(z.string(), z.unknown()).optional().openapi({ description: 'handle_info: state of a handle' }),
    error: GatewayResponseError.optional(),
    events: z.array(z.record(z.string(), z.unknown())).optional().openapi({
      description:
        'getSession: the asynchronous events the service received for the session (or handle), oldest first: webrtcup, media, hangup ...',
    }),
    liveHandles: z.array(janusId).optional().openapi({ description: 'getSession: handles whose PeerConnection is up' }),
  })
  .openapi('GatewayAdminSessionResponse', { description: 'An Admin API answer about sessions and handles' });

/** The gateway server's own description (Janus `info`): kept as the gateway sends it. */
export const GatewayInfo = z.looseObject({
  janus: z.string(),
  name: z.string().optional(),
  version: z.number().int().optional(),
  version_string: z.string().optional(),
  plugins: z.record(z.string(), z.unknown()).optional(),
  transports: z.record(z.string(), z.unknown()).optional(),
  supervisor: z
    .object({
      state: z.string(),
      pid: z.number().int().nullable(),
      since: z.string(),
      restarts: z.number().int(),
      lastError: z.string().nullable(),
      version: z.string().nullable(),
    })
    .optional()
    .openapi({
      description: "The sidecar's supervision of the gateway: state, process, restarts and the last failure",
    }),
});

/** Which plugin to attach; the configured default (the echo test) when absent. */
export const GatewayPluginQuery = z.strictObject({
  plugin: z
    .string()
    .regex(/^[a-z0-9_.-]{1,128}$/, 'must be a plugin package name such as janus.plugin.echotest')
    .optional()
    .openapi({ description: 'Plugin package name, e.g. janus.plugin.echotest; the configured default when absent' }),
});

/** The raw Admin API answer about a session, untouched. */
export const GatewayRaw = z
  .record(z.string(), z.unknown())
  .openapi({ description: 'The Admin API answer as the gateway sent it' });

export const SessionQuery = z.strictObject({
  sessionId: janusIdQuery,
  handleId: janusIdQuery
    .optional()
    .openapi({ description: 'When given, the handle_info of that handle; otherwise the handles of the session' }),
});

export const GatewaySettingsRequest = z
  .strictObject({
    logLevel: z.number().int().min(0).max(7).optional(),
    logTimestamps: z.boolean().optional(),
    logColors: z.boolean().optional(),
    lockingDebug: z.boolean().optional(),
    refcountDebug: z.boolean().optional(),
    libniceDebug: z.boolean().optional(),
    sessionTimeout: z.number().int().min(0).max(86_400).optional(),
    minNackQueue: z.number().int().min(0).max(10_000).optional(),
    noMediaTimer: z.number().int().min(0).max(3600).optional(),
    slowlinkThreshold: z.number().int().min(0).max(10_000).optional(),
  })
  .refine((v) => Object.keys(v).length > 0, 'give at least one setting')
  // The refinement above as JSON Schema states it for tools.
  .openapi({ minProperties: 1 });
