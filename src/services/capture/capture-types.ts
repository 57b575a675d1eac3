import type { z } from 'zod';
import type { Principal } from '../auth/principal.js';
import type { Surface } from '../../auth/roles.js';
import type { InitParams } from '../../schemas/gateway-init.js';
import type { CandidateData } from '../../schemas/operations.js';
import type { ActiveEvent } from './active-liveness.js';
import type { CaptureGuidance } from './frame-judge.js';

/**
 * The words of a capture session (capture-session.ts runs one; capture-store.ts keeps what its client reads;
 * capture-operation.ts turns its frames into an operation).
 */

export type CaptureParams = z.output<typeof InitParams>;
export type CaptureState = 'WAITING_MEDIA' | 'CAPTURING' | 'PROCESSING' | 'DONE' | 'TIMEOUT' | 'FAILED';

/** One event of the session, as the client reads it: guidance while capturing, then the outcome. */
export interface CaptureEvent {
  at: string;
  type:
    | 'STARTED'
    | 'MEDIA'
    | CaptureGuidance
    | ActiveEvent['type']
    | 'SPEECH'
    | 'KEEP_SPEAKING'
    | 'PROCESSING'
    | 'DONE'
    | 'TIMEOUT'
    | 'FAILED';
  [key: string]: unknown;
}

/** The outcome: the operation's status, its UUID in the operation log, and what the operation answered. */
export interface CaptureResult {
  status: string;
  operationUuid?: string;
  subjectId?: string;
  subjectStatus?: string;
  score?: number;
  candidates?: z.output<typeof CandidateData>[];
  /** A stable code where the capture refused (refusal-reasons.ts), else words. */
  reason?: string;
  /** Why, in words a person acts on, where the capture refused. */
  text?: string;
}

/** Where the frames come from (the sidecar's decoder of the forwarded RTP) and how to let the media go. */
export interface CaptureMedia {
  frames(signal: AbortSignal): AsyncIterable<Uint8Array>;
  /** Multimodal sessions with VOICE: the decoded audio, 16 kHz mono s16le PCM in chunks. */
  audio?(signal: AbortSignal): AsyncIterable<Uint8Array>;
  /** Stop the forwarding and the decoder and end the gateway session: called once, whatever the outcome. */
  release(): Promise<void>;
}

export interface CaptureCaller {
  principal: Principal;
  surface: Surface;
}
