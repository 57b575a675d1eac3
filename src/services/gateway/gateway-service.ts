import type { JanusAdminClient } from '../../gateway/admin-client.js';
import { JanusApiError } from '../../gateway/errors.js';
import type { JanusAnswer, TricklePayload } from '../../gateway/janus-answer.js';
import type { JanusClient } from '../../gateway/janus-client.js';
import type { SidecarClient } from '../../gateway/sidecar-client.js';
import type { ServiceContext } from '../context.js';
import { mapped } from './errors.js';
import { gatewayClients } from './gateway-clients.js';
import { messageForEvent, pluginRequest } from './plugin-messages.js';
import { SessionTracker } from './session-tracker.js';
import { applySettings, type GatewaySettings } from './settings.js';
import type { DecoderClient } from '../../gateway/decoder-client.js';
import { CaptureRegistry, type CaptureStarter } from '../capture/capture-registry.js';
import { CaptureStore } from '../capture/capture-store.js';
import type { CaptureCaller } from '../capture/capture-session.js';
import { VIDEOROOM } from '../capture/videoroom.js';

const ECHOTEST = 'janus.plugin.echotest';

export interface ConnectInput {
  sessionId: number;
  handleId: number;
  jsep: Record<string, unknown>;
  params: Record<string, unknown>;
}

/**
 * The media gateway operations (seed section 4.7) over the Janus the sidecar supervises. Sessions created
 * through us are tracked: kept alive while in use and polled for their events (see {@link SessionTracker}).
 */
export class GatewayService {
  private readonly sidecar: SidecarClient;
  private readonly janus: JanusClient;
  private readonly admin: JanusAdminClient;
  private readonly trackers = new Map<number, SessionTracker>();
  /** The sidecar's media decoders, which capture sessions read their frames from. */
  readonly decoders: DecoderClient;
  /** The capture sessions this node runs, and (through its store) every node's. */
  readonly captures: CaptureRegistry;
  /** Janus's session timeout as last set through us; keepalives are sent well within it. */
  private sessionTimeoutSeconds: number;

  constructor(private readonly ctx: ServiceContext) {
    const config = ctx.config;
    this.sessionTimeoutSeconds = config.BIMS_JANUS_SESSION_TIMEOUT;
    ({ sidecar: this.sidecar, janus: this.janus, admin: this.admin, decoders: this.decoders } = gatewayClients(config));
    this.captures = new CaptureRegistry(this, new CaptureStore(ctx));
  }

  /** The service's clock (tests may set it), for the captures' deadlines. */
  now(): Date {
    return this.ctx.now();
  }

  get log() {
    return this.ctx.log;
  }

  /** createGatewayConnection: a new Janus session, kept alive while in use. */
  create(): Promise<JanusAnswer> {
    return mapped(async () => {
      const answer = await this.janus.create();
      this.track(answer.data!.id!);
      return answer;
    });
  }

  /** attachToGatewayConnection: a handle on `plugin` (the configured default when absent). */
  attach(sessionId: number, plugin?: string): Promise<JanusAnswer> {
    return mapped(() => this.attachTracked(sessionId, plugin ?? this.ctx.config.BIMS_GATEWAY_PLUGIN));
  }

  /** createAndAttach: both; the answer is the attach answer (`data.id` the handle) with `session_id` set. */
  createAndAttach(plugin?: string): Promise<JanusAnswer> {
    return mapped(async () => {
      const created = await this.janus.create();
      const sessionId = created.data!.id!;
      this.track(sessionId);
      try {
        const attached = await this.attachTracked(sessionId, plugin ?? this.ctx.config.BIMS_GATEWAY_PLUGIN);
        return { ...attached, session_id: sessionId };
      } catch (error) {
        this.trackers.get(sessionId)?.end('attach failed', true);
        throw error;
      }
    });
  }

  /**
   * connectToGateway: send the JSEP offer with the session's init params as the plugin's body and wait for
   * the plugin's event carrying the JSEP answer. The echo test plugin is told to echo audio and video.
   */
  connect(input: ConnectInput, capture?: CaptureStarter): Promise<JanusAnswer> {
    return mapped(async () => {
      const tracker = this.track(input.sessionId);
      tracker.touch();
      const plugin = tracker.pluginOf(input.handleId) ?? (await this.pluginOf(input.sessionId, input.handleId));
      // A handle on the VideoRoom plugin is a biometric capture session (docs/gateway-capture.md).
      if (plugin === VIDEOROOM && capture) return this.captures.connect(input, tracker, capture);
      const body = plugin === ECHOTEST ? { ...input.params, audio: true, video: true } : { ...input.params };
      return this.messageForEvent(tracker, input.sessionId, input.handleId, body, input.jsep);
    });
  }

  /** Send a plugin message (with a JSEP) and wait for the plugin's event holding the JSEP answer (plugin-messages.ts). */
  messageForEvent(
    tracker: SessionTracker,
    sessionId: number,
    handleId: number,
    body: Record<string, unknown>,
    jsep?: Record<string, unknown>,
  ): Promise<JanusAnswer> {
    const timeoutMs = this.ctx.config.BIMS_GATEWAY_EVENT_TIMEOUT_MS;
    return messageForEvent(this.janus, timeoutMs, tracker, sessionId, handleId, body, jsep);
  }

  /** A plugin request Janus answers at once; a plugin error becomes a JanusApiError (plugin-messages.ts). */
  pluginRequest(sessionId: number, handleId: number, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    return pluginRequest(this.janus, sessionId, handleId, body);
  }

  /**
   * Runs `work` on a handle of BIMS's own on `plugin`, in a session made for it and destroyed after: for plugin
   * requests that must not depend on a client's handle, which may already be detached (a room's destruction
   * after the client stopped its session).
   */
  async withOwnHandle<T>(plugin: string, work: (sessionId: number, handleId: number) => Promise<T>): Promise<T> {
    const sessionId = Number((await this.janus.create()).data?.id);
    try {
      const handleId = Number((await this.janus.attach(sessionId, plugin)).data?.id);
      return await work(sessionId, handleId);
    } finally {
      await this.janus.destroy(sessionId).catch(() => {});
    }
  }

  /** How long a finished capture's gateway session stays readable before it is destroyed. */
  get captureLingerMs(): number {
    return this.ctx.config.BIMS_CAPTURE_LINGER_SECONDS * 1000;
  }

  /** Hang up a handle's PeerConnection, keeping the handle and the session. */
  hangup(sessionId: number, handleId: number): Promise<JanusAnswer> {
    return this.janus.hangup(sessionId, handleId);
  }

  /** The API secret, which the VideoRoom plugin also demands as its admin key. */
  async adminKey(): Promise<string> {
    return (await this.sidecar.endpoints()).apiSecret;
  }

  /**
   * trickleGateway: forward ICE candidates (or the end of them) to the handle's PeerConnection. On the handle
   * of a capture session the answer also carries `capture`, the capture's state, events and outcome: the one
   * way a client on the user surface follows its capture (getSession is for administrators). Once the capture
   * is over its media is gone, so nothing is forwarded: the answer is the capture's outcome alone. The
   * capture is read from the database, so a trickle to any node of a cluster answers it alike.
   */
  trickle(sessionId: number, handleId: number, payload: TricklePayload, caller?: CaptureCaller): Promise<JanusAnswer> {
    return mapped(async () => {
      const capture = caller ? await this.captures.view(sessionId, handleId, caller) : undefined;
      if (capture?.over) return { janus: 'ack', session_id: sessionId, sender: handleId, capture: capture.view };
      // A capture another node runs is that node's session to keep alive and to poll: polling it here too
      // would take Janus's events (its webrtcup) away from the node that waits for them.
      if (!capture || capture.here) this.track(sessionId).touch();
      const answer = await this.janus.trickle(sessionId, handleId, payload);
      if (!capture || !caller) return answer;
      return { ...answer, capture: (await this.captures.view(sessionId, handleId, caller))?.view ?? capture.view };
    });
  }

  /**
   * stopGatewayConnection: hang up and detach the handle when given, then destroy the session. A handle that
   * has no PeerConnection yet is not an error; the session's destruction is what the answer reports.
   */
  stop(sessionId: number, handleId?: number): Promise<JanusAnswer> {
    return mapped(async () => {
      if (handleId !== undefined) {
        try {
          await this.janus.hangup(sessionId, handleId);
          await this.janus.detach(sessionId, handleId);
        } catch (error) {
          // 458: the session is gone, reported by destroy below; others (no such handle) are the client's fault.
          if (!(error instanceof JanusApiError) || error.code !== 458) throw error;
        }
      }
      const tracker = this.trackers.get(sessionId);
      // Its captures end, on this node or any other (which learns it when the gateway session goes).
      await this.captures.stop(sessionId, 'stopped by the client');
      const answer = await this.janus.destroy(sessionId);
      tracker?.end('stopped by the client');
      return answer;
    });
  }

  /** getInfo: Janus's `info`, plus what the sidecar says about Janus's supervision (never its secrets). */
  info(): Promise<JanusAnswer> {
    return mapped(async () => {
      const report = await this.sidecar.report();
      const answer = await this.janus.info();
      const { state, pid, since, restarts, lastError, version } = report;
      return { ...answer, supervisor: { state, pid, since, restarts, lastError, version } };
    });
  }

  /** getListSession: Admin API `list_sessions`. */
  listSessions(): Promise<JanusAnswer> {
    return mapped(() => this.admin.listSessions());
  }

  /**
   * getSession: Admin API `list_handles` (or `handle_info` for one handle), with the events this service saw
   * on the session (`webrtcup`, `media`, `hangup` ...), those of its capture sessions (read from the database,
   * so every node shows them) and the handles whose PeerConnection is up.
   */
  session(sessionId: number, handleId?: number): Promise<JanusAnswer> {
    return mapped(async () => {
      const answer = await this.sessionRaw(sessionId, handleId);
      const tracker = this.trackers.get(sessionId);
      const captureEvents = await this.captures.events(sessionId, handleId);
      return {
        ...answer,
        events: [...(tracker?.events(handleId) ?? []), ...captureEvents],
        liveHandles: tracker?.liveHandles() ?? [],
      };
    });
  }

  /** getSessionRaw: the Admin API answer (`list_handles`, or `handle_info` for one handle) untouched. */
  sessionRaw(sessionId: number, handleId?: number): Promise<JanusAnswer> {
    return mapped(() =>
      handleId === undefined ? this.admin.listHandles(sessionId) : this.admin.handleInfo(sessionId, handleId),
    );
  }

  /** getStatus: Admin API `get_status`. */
  status(): Promise<JanusAnswer> {
    return mapped(() => this.admin.getStatus());
  }

  /** setSettings: one Admin API request per setting given, then `get_status` to show the result. */
  settings(settings: GatewaySettings): Promise<JanusAnswer> {
    return mapped(async () => {
      await applySettings(this.admin, settings);
      if (settings.sessionTimeout !== undefined) this.sessionTimeoutSeconds = settings.sessionTimeout;
      return this.admin.getStatus();
    });
  }

  /** Stop every tracker (at shutdown; the sessions themselves then time out in Janus), once the captures' last states are written. */
  async close(): Promise<void> {
    await this.captures.close();
    for (const tracker of [...this.trackers.values()]) tracker.end('service closing');
  }

  private async attachTracked(sessionId: number, plugin: string): Promise<JanusAnswer> {
    const tracker = this.track(sessionId);
    tracker.touch();
    const answer = await this.janus.attach(sessionId, plugin);
    tracker.rememberPlugin(answer.data!.id!, plugin);
    return answer;
  }

  /** The plugin of a handle attached elsewhere (another node, or before a restart of this one). */
  private async pluginOf(sessionId: number, handleId: number): Promise<string | undefined> {
    const info = await this.admin.handleInfo(sessionId, handleId);
    return (info.info as { plugin?: string } | undefined)?.plugin;
  }

  /** The tracker of a session, started on first use (sessions created on another node are adopted). */
  private track(sessionId: number): SessionTracker {
    let tracker = this.trackers.get(sessionId);
    if (!tracker) {
      tracker = new SessionTracker(sessionId, {
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
        onEnd: (id, reason) => {
          if (this.trackers.get(id) === tracker) this.trackers.delete(id);
          // Without its gateway session a capture has no media: it ends (a stop sent to another node ends so here).
          this.captures.cancel(id, `the gateway session ended (${reason})`);
        },
      });
      this.trackers.set(sessionId, tracker);
      tracker.start();
    }
    return tracker;
  }
}
