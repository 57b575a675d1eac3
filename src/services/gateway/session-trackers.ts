import type { JanusClient } from '../../gateway/janus-client.js';
import type { ServiceContext } from '../context.js';
import type { JanusAnswer } from '../../gateway/janus-answer.js';
import { SessionTracker } from './session-tracker.js';

/**
 * The trackers of the sessions this node keeps alive and polls, one per session, started on first use (a
 * session made on another node is adopted when its client calls here). `onEnd` hears each tracker's end, and
 * whether the session itself is gone from the gateway with it.
 */
export class SessionTrackers {
  private readonly trackers = new Map<number, SessionTracker>();
  /** Janus's session timeout as last set through us; keepalives are sent well within it. */
  sessionTimeoutSeconds: number;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly janus: JanusClient,
    private readonly onEnd: (sessionId: number, reason: string, gone: boolean) => void,
    /** A plugin's answer this node's poll took and nobody here waits for (session-tracker.ts). */
    private readonly onUnclaimed?: (event: JanusAnswer) => void,
  ) {
    this.sessionTimeoutSeconds = ctx.config.BIMS_JANUS_SESSION_TIMEOUT;
  }

  /** The session's tracker, if this node runs one. */
  get(sessionId: number): SessionTracker | undefined {
    return this.trackers.get(sessionId);
  }

  /** The tracker of a session, started on first use. */
  track(sessionId: number): SessionTracker {
    let tracker = this.trackers.get(sessionId);
    if (!tracker) {
      const made: SessionTracker = new SessionTracker(sessionId, {
        janus: this.janus,
        log: this.ctx.log,
        idleMs: this.ctx.config.BIMS_GATEWAY_IDLE_SECONDS * 1000,
        // A keepalive at least three times per session timeout (0 disables Janus's timeout).
        keepaliveMs: () => {
          const configured = this.ctx.config.BIMS_GATEWAY_KEEPALIVE_SECONDS * 1000;
          return this.sessionTimeoutSeconds > 0
            ? Math.min(configured, (this.sessionTimeoutSeconds * 1000) / 3)
            : configured;
        },
        onUnclaimed: this.onUnclaimed,
        onEnd: (id, reason, gone) => {
          if (this.trackers.get(id) === made) this.trackers.delete(id);
          this.onEnd(id, reason, gone);
        },
      });
      tracker = made;
      this.trackers.set(sessionId, tracker);
      tracker.start();
    }
    return tracker;
  }

  /** Every tracker stops (at shutdown; the sessions then time out in Janus unless another node keeps them). */
  endAll(reason: string): void {
    for (const tracker of [...this.trackers.values()]) tracker.end(reason);
  }
}
