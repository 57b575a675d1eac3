import { z } from './common.js';

/**
 * One event of a capture session as its client reads it (in trickleGateway's answer on the capture's handle;
 * getSession on /admin), docs/gateway-capture.md, "Events". Which fields an event has depends on its type; a
 * later version may add types and fields, so clients keep what they do not know.
 */
export const CaptureEvent = z
  .looseObject({
    at: z.string().openapi({ description: 'When it happened (ISO 8601, the service clock)' }),
    type: z.string().openapi({
      description:
        'STARTED, MEDIA (first decoded frame); guidance NO_FACE, MULTIPLE_FACES, MOVE_CLOSER, LOOK_STRAIGHT, LOW_QUALITY, HOLD_STILL, FACE_FOUND; INSTRUCTION, CHALLENGE_PASSED, CHALLENGE_FAILED (active liveness); SPEECH, KEEP_SPEAKING (voice); PROCESSING; then DONE, TIMEOUT or FAILED',
      example: 'LOW_QUALITY',
    }),
    framesPerSecond: z.number().int().optional().openapi({
      description:
        "STARTED: the rate the session's video frames are analysed at (its framesPerSecond, or the default): the camera need not send more (the SDK asks its browser for that rate, RTCRtpSender's maxFramerate)",
    }),
    reason: z.string().optional().openapi({
      description:
        "Guidance and a refusal's DONE: why the frame (or the capture) was refused, a stable code: NO_FACE, TWO_FACES, TOO_FAR, TURNED_AWAY, TOO_DARK, EYES_CLOSED, LOW_QUALITY, NO_LIVE_PERSON (DONE: also ACTIVE_LIVENESS_FAILED). CHALLENGE_FAILED: TIMEOUT, WRONG_MOVE, FACE_LOST, FACE_CHANGED. TIMEOUT and FAILED: words",
      example: 'TOO_DARK',
    }),
    text: z.string().optional().openapi({
      description: 'With a reason code: the same reason in words a person acts on',
      example: 'Your face is too dark: turn towards a light, or put a light in front of you.',
    }),
    detail: z.string().optional().openapi({ description: "Guidance: the gate's own measure, for operators" }),
    accepted: z
      .number()
      .int()
      .optional()
      .openapi({ description: 'Guidance: frames of the tracked face accepted so far' }),
    needed: z.number().int().optional().openapi({ description: 'Guidance: frames the capture needs' }),
    instruction: z.enum(['TURN_LEFT', 'TURN_RIGHT', 'BLINK']).optional(),
    step: z.number().int().optional(),
    steps: z.number().int().optional(),
    withinMs: z.number().int().optional().openapi({ description: 'INSTRUCTION: time to follow it' }),
    retriesLeft: z.number().int().optional(),
    speechMs: z.number().optional(),
    neededMs: z.number().optional(),
    status: z.string().optional().openapi({
      description:
        "DONE: the operation's status (or the refusal's, QUALITY_CHECK_FAILED or LIVENESS_CHECK_FAILED); TIMEOUT; FAILED",
    }),
    operationUuid: z.uuid().optional(),
    metrics: z.record(z.string(), z.number().nullable()).optional().openapi({
      description: 'The outcome: frames decoded and analysed, ms from connect to the first frame and to the result',
    }),
  })
  .openapi('CaptureEvent', { description: 'One event of a capture session' });
