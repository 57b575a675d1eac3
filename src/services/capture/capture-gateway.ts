import type { DecoderClient } from '../../gateway/decoder-client.js';
import type { JanusAnswer } from '../../gateway/janus-answer.js';
import type { Logger } from '../../logger.js';
import type { GatewayCaller } from '../gateway/gateway-owner.js';
import type { SessionTracker } from '../gateway/session-tracker.js';

/**
 * What a capture asks of the media gateway, named on the capture's side: the gateway service holds the capture
 * registry and implements this, so the capture files need not import the gateway service (whose file imports
 * theirs) and the two areas form no cycle of imports.
 */
export interface CaptureGateway {
  /** The sidecar's media decoders, which a capture reads its frames from. */
  readonly decoders: DecoderClient;
  readonly log: Logger;
  /** How long a finished capture's gateway session stays readable before it is destroyed. */
  readonly captureLingerMs: number;
  /** The service's clock (tests may set it), for the captures' deadlines. */
  now(): Date;
  /** The VideoRoom plugin's admin key. */
  adminKey(): Promise<string>;
  /** A plugin request answered at once; a plugin error becomes a JanusApiError. */
  pluginRequest(sessionId: number, handleId: number, body: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** A plugin message with a JSEP, answered by the plugin's event holding the JSEP answer. */
  messageForEvent(
    tracker: SessionTracker,
    sessionId: number,
    handleId: number,
    body: Record<string, unknown>,
    jsep?: Record<string, unknown>,
  ): Promise<JanusAnswer>;
  /** Runs `work` on a handle of BIMS's own on `plugin`, in a session made for it and destroyed after. */
  withOwnHandle<T>(plugin: string, work: (sessionId: number, handleId: number) => Promise<T>): Promise<T>;
  /** Hangs up a handle's PeerConnection, keeping the handle and the session. */
  hangup(sessionId: number, handleId: number): Promise<JanusAnswer>;
  /** Ends a gateway session (or one handle of it); `null` as the caller: BIMS's own doing. */
  stop(caller: GatewayCaller | null, sessionId: number, handleId?: number): Promise<JanusAnswer>;
}

/** The offer a client sends to connect a handle: the session's init params as the plugin's body. */
export interface ConnectInput {
  sessionId: number;
  handleId: number;
  jsep: Record<string, unknown>;
  params: Record<string, unknown>;
}
