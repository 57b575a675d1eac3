import type { JanusAnswer } from '../../gateway/janus-answer.js';
import type { JanusClient } from '../../gateway/janus-client.js';
import { JanusApiError } from '../../gateway/errors.js';
import type { Logger } from '../../logger.js';

interface SessionTrackerOptions {
  janus: JanusClient;
  log: Logger;
  /** How often a keepalive is sent; kept below Janus's session timeout. */
  keepaliveMs: () => number;
  /** A session with no PeerConnection up and no client call for this long is abandoned and destroyed. */
  idleMs: number;
  /**
   * Called once when the tracker ends (destroyed, gone from Janus, idle, unreachable); `gone`: the session
   * itself no longer exists in Janus (destroyed here or found gone), not only its tracking here.
   */
  onEnd: (sessionId: number, reason: string, gone: boolean) => void;
  /**
   * A plugin's answer to a message (it carries a JSEP) that nobody here waits for: another node sent the
   * message and waits for it, but Janus hands each event to one poller only, and this node's poll took it.
   */
  onUnclaimed?: (event: JanusAnswer) => void;
}

interface Waiter {
  match: (event: JanusAnswer) => boolean;
  resolve: (event: JanusAnswer | null) => void;
}

/** Events kept per session for getSession and for late waiters. */
const MAX_EVENTS = 100;

/**
 * Keeps one Janus session alive while it is in use, and collects its asynchronous events.
 *
 * "In use" means: its client called us within the idle window, or one of its PeerConnections is up (a
 * `webrtcup` not yet followed by a `hangup`): a browser in the middle of a call makes no API calls, yet
 * its session must live. While in use, a small per-session timer sends Janus a `keepalive`; once neither
 * holds, the session is destroyed rather than left for Janus's timeout. A single long poll per session
 * gathers events (the plugin's answers with the JSEP, `webrtcup`, `media`, `hangup` ...): Janus hands each
 * event to one poller only, so the service owns that poll and lets callers wait on it.
 */
export class SessionTracker {
  private readonly recent: JanusAnswer[] = [];
  private readonly waiters = new Set<Waiter>();
  private readonly plugins = new Map<number, string>();
  private readonly mediaUp = new Set<number>();
  private readonly stopPolling = new AbortController();
  private lastClientCall = Date.now();
  private lastKeepalive = Date.now();
  private timer: ReturnType<typeof setInterval> | null = null;
  private ended = false;

  constructor(
    readonly sessionId: number,
    private readonly options: SessionTrackerOptions,
  ) {}

  start(): void {
    void this.pollLoop();
    const tickMs = Math.max(500, Math.min(this.options.keepaliveMs(), this.options.idleMs / 2));
    this.timer = setInterval(() => void this.tick(), tickMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** The client called us about this session: it is still in use. */
  touch(): void {
    this.lastClientCall = Date.now();
  }

  /** Remember which plugin a handle is attached to, so connect knows what body the plugin expects. */
  rememberPlugin(handleId: number, plugin: string): void {
    this.plugins.set(handleId, plugin);
  }

  pluginOf(handleId: number): string | undefined {
    return this.plugins.get(handleId);
  }

  /** The events seen so far (most recent last), optionally those of one handle only. */
  events(handleId?: number): JanusAnswer[] {
    return handleId === undefined ? [...this.recent] : this.recent.filter((e) => e.sender === handleId);
  }

  /** Whether the tracker stopped (session destroyed, gone, idle or unreachable). */
  get isEnded(): boolean {
    return this.ended;
  }

  /** Handles whose PeerConnection is up. */
  liveHandles(): number[] {
    return [...this.mediaUp];
  }

  /**
   * Wait for the first event matching `match`, including one already received. Resolves with null after
   * `timeoutMs`, or when the tracker ends.
   */
  waitFor(
    match: (event: JanusAnswer) => boolean,
    timeoutMs: number,
  ): { promise: Promise<JanusAnswer | null>; cancel: () => void } {
    const seen = this.recent.find(match);
    if (seen) return { promise: Promise.resolve(seen), cancel: () => {} };
    let waiter!: Waiter;
    let timer: ReturnType<typeof setTimeout>;
    const promise = new Promise<JanusAnswer | null>((resolve) => {
      waiter = {
        match,
        resolve: (event) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(event);
        },
      };
      timer = setTimeout(() => {
        this.waiters.delete(waiter);
        resolve(null);
      }, timeoutMs);
      if (this.ended) resolve(null);
      else this.waiters.add(waiter);
    });
    return {
      promise,
      cancel: () => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
      },
    };
  }

  /**
   * Stop polling and keeping alive; `destroy` also ends the session in Janus (best effort). `gone`: the session
   * no longer exists in Janus (so it is when destroyed).
   */
  end(reason: string, destroy = false, gone = destroy): void {
    if (this.ended) return;
    this.ended = true;
    if (this.timer) clearInterval(this.timer);
    this.stopPolling.abort();
    for (const waiter of [...this.waiters]) waiter.resolve(null);
    this.waiters.clear();
    if (destroy) void this.options.janus.destroy(this.sessionId).catch(() => {});
    this.options.log.debug('gateway session released', { sessionId: this.sessionId, reason });
    this.options.onEnd(this.sessionId, reason, gone);
  }

  /** An event another node's poll took for a waiter of this node (gateway-service.ts relays it). */
  deliver(event: JanusAnswer): void {
    if (!this.ended) this.record(event, false);
  }

  private record(event: JanusAnswer, polledHere = true): void {
    this.recent.push(event);
    if (this.recent.length > MAX_EVENTS) this.recent.shift();
    const handle = event.sender;
    if (typeof handle === 'number') {
      if (event.janus === 'webrtcup') this.mediaUp.add(handle);
      if (event.janus === 'hangup' || event.janus === 'detached') this.mediaUp.delete(handle);
    }
    let claimed = false;
    for (const waiter of [...this.waiters])
      if (waiter.match(event)) {
        waiter.resolve(event);
        claimed = true;
      }
    if (!claimed && polledHere && event.jsep && event.transaction) this.options.onUnclaimed?.(event);
  }

  private async pollLoop(): Promise<void> {
    let failures = 0;
    while (!this.ended) {
      try {
        const events = await this.options.janus.poll(this.sessionId, { signal: this.stopPolling.signal });
        failures = 0;
        for (const event of events) this.record(event);
      } catch (error) {
        if (this.ended) return;
        if (error instanceof JanusApiError && error.code === 458) return this.end('gone from the gateway', false, true);
        failures += 1;
        // Janus restarting loses its sessions; give up once it has been unreachable for a while.
        if (failures >= 5) return this.end(`event poll failing: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** failures));
      }
    }
  }

  private async tick(): Promise<void> {
    if (this.ended) return;
    const now = Date.now();
    if (now - this.lastClientCall > this.options.idleMs && this.mediaUp.size === 0) {
      return this.end('idle: no PeerConnection up and no client call', true);
    }
    if (now - this.lastKeepalive >= this.options.keepaliveMs()) {
      this.lastKeepalive = now;
      try {
        await this.options.janus.keepalive(this.sessionId);
      } catch (error) {
        if (error instanceof JanusApiError && error.code === 458) this.end('gone from the gateway', false, true);
      }
    }
  }
}
