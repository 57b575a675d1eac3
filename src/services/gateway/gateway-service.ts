import type { JanusAdminClient } from '../../gateway/admin-client.js';
import { JanusApiError } from '../../gateway/errors.js';
import type { JanusAnswer, TricklePayload } from '../../gateway/janus-answer.js';
import type { JanusClient } from '../../gateway/janus-client.js';
import type { SidecarClient } from '../../gateway/sidecar-client.js';
import type { ServiceContext } from '../context.js';
import { mapped } from './errors.js';
import { gatewayClients } from './gateway-clients.js';
import { messageForEvent, pluginRequest } from './plugin-messages.js';
import type { SessionTracker } from './session-tracker.js';
import { SessionTrackers } from './session-trackers.js';
import { SessionRegistry } from './session-registry.js';
import { actsOnOf, ownerKeyOf, type GatewayCaller } from './gateway-owner.js';
import { GatewayInspection } from './gateway-inspection.js';
import type { DecoderClient } from '../../gateway/decoder-client.js';
import { CaptureRegistry, type CaptureStarter } from '../capture/capture-registry.js';
import { CaptureStore, type CaptureView } from '../capture/capture-store.js';
import type { CaptureCaller } from '../capture/capture-types.js';
import type { CaptureGateway, ConnectInput } from '../capture/capture-gateway.js';
import { VIDEOROOM } from '../capture/videoroom.js';
import { parseRelayed, relayGatewayEvent } from './event-relay.js';

const ECHOTEST = 'janus.plugin.echotest';

/**
 * The media gateway operations (seed section 4.7) over the Janus the sidecar supervises. Sessions created
 * through us are tracked: kept alive while in use and polled for their events (see {@link SessionTracker}).
 * Each belongs to the account that made it, on every node ({@link SessionRegistry}): a call about it from
 * another account answers as for an unknown id, except on /admin. `caller` null: the service itself.
 */
export class GatewayService implements CaptureGateway {
  private readonly sidecar: SidecarClient;
  private readonly janus: JanusClient;
  private readonly admin: JanusAdminClient;
  private readonly trackers: SessionTrackers;
  /** getInfo, getListSession, getSession, getSessionRaw, getStatus, setSettings. */
  readonly inspect: GatewayInspection;
  /** Whose each session is, and what each owner holds (in the database, for every node). */
  readonly sessions: SessionRegistry;
  /** The sidecar's media decoders, which capture sessions read their frames from. */
  readonly decoders: DecoderClient;
  /** The capture sessions this node runs, and (through its store) every node's. */
  readonly captures: CaptureRegistry;

  constructor(private readonly ctx: ServiceContext) {
    const clients = gatewayClients(ctx.config);
    ({ sidecar: this.sidecar, janus: this.janus, admin: this.admin, decoders: this.decoders } = clients);
    this.sessions = new SessionRegistry(ctx);
    this.captures = new CaptureRegistry(this, new CaptureStore(ctx));
    this.trackers = new SessionTrackers(
      ctx,
      this.janus,
      (id, reason, gone) => {
        // Without its gateway session a capture has no media: it ends (a stop sent to another node ends so here).
        this.captures.cancel(id, `the gateway session ended (${reason})`);
        if (gone) void this.sessions.forget(id);
      },
      (event) => void relayGatewayEvent(ctx, event),
    );
    this.inspect = new GatewayInspection(clients, this.trackers, this.sessions, this.captures);
  }

  /**
   * A plugin's answer another node's poll took, relayed on {@link GATEWAY_EVENT_CHANNEL}: the waiter for it is
   * here (a connect made on this node for a session another node made and also polls).
   */
  relayed(payload: string): void {
    const event = parseRelayed(payload);
    if (event) this.trackers.get(Number(event.session_id))?.deliver(event);
  }

  /** The service's clock (tests may set it), for the captures' deadlines. */
  now(): Date {
    return this.ctx.now();
  }

  get log() {
    return this.ctx.log;
  }

  /** createGatewayConnection: a new Janus session of the caller's, kept alive while in use. @throws 429/503 past the caps */
  create(caller: GatewayCaller): Promise<JanusAnswer> {
    return mapped(() => this.createOwned(ownerKeyOf(caller.principal)));
  }

  /** attachToGatewayConnection: a handle on `plugin` (the configured default when absent). */
  attach(caller: GatewayCaller, sessionId: number, plugin?: string): Promise<JanusAnswer> {
    return mapped(() => this.attachCounted(actsOnOf(caller), sessionId, plugin ?? this.ctx.config.BIMS_GATEWAY_PLUGIN));
  }

  /** createAndAttach: both; the answer is the attach answer (`data.id` the handle) with `session_id` set. */
  createAndAttach(caller: GatewayCaller, plugin?: string): Promise<JanusAnswer> {
    return mapped(() => this.createOwned(ownerKeyOf(caller.principal), plugin ?? this.ctx.config.BIMS_GATEWAY_PLUGIN));
  }

  /**
   * connectToGateway: send the JSEP offer with the session's init params as the plugin's body and wait for
   * the plugin's event carrying the JSEP answer. The echo test plugin is told to echo audio and video.
   */
  connect(input: ConnectInput, capture: CaptureStarter): Promise<JanusAnswer> {
    return mapped(async () => {
      const known = await this.sessions.checkHandle(input.sessionId, input.handleId, actsOnOf(capture.caller));
      const tracker = this.trackers.track(input.sessionId);
      tracker.touch();
      const plugin =
        known ?? tracker.pluginOf(input.handleId) ?? (await this.pluginOf(input.sessionId, input.handleId));
      // A handle on the VideoRoom plugin is a biometric capture session (docs/gateway-capture.md).
      if (plugin === VIDEOROOM) return this.captures.connect(input, tracker, capture);
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
   * is over its media is gone, so nothing is forwarded: the answer is the capture's outcome alone; while it
   * runs on this node, a repeated end of candidates is not forwarded either. The capture is read from the
   * database (on PGlite, the sole node, from memory), so a trickle to any node of a cluster answers it alike.
   */
  trickle(
    caller: CaptureCaller,
    sessionId: number,
    handleId: number,
    payload: TricklePayload,
  ): Promise<JanusAnswer & { capture?: CaptureView }> {
    return mapped(async () => {
      const actsOn = actsOnOf(caller);
      const capture = await this.captures.view(sessionId, handleId, actsOn);
      // A finished capture outlives its gateway session (10 minutes), for its owner.
      if (capture?.over) return { janus: 'ack', session_id: sessionId, sender: handleId, capture: capture.view };
      // The poll of a capture this node runs, once its end of candidates reached Janus: answered from here, with
      // neither the handle's row (`view` found the capture, its owner checked, on this very handle) nor Janus
      // asked again (a repeated `completed` changes nothing there). About one such poll comes per analysed
      // frame, and its statement and request were CPU the frames' analyses share.
      const ending = capture?.here === true && 'completed' in payload;
      if (ending && this.captures.candidatesEnded(sessionId, handleId)) {
        this.trackers.track(sessionId).touch();
        return { janus: 'ack', session_id: sessionId, sender: handleId, capture: capture.view };
      }
      await this.sessions.checkHandle(sessionId, handleId, actsOn);
      // A capture another node runs is that node's session to keep alive and to poll: polling it here too
      // would take Janus's events (its webrtcup) away from the node that waits for them.
      if (!capture || capture.here) this.trackers.track(sessionId).touch();
      const answer = await this.janus.trickle(sessionId, handleId, payload);
      if (ending) this.captures.candidatesEnded(sessionId, handleId, true);
      if (!capture) return answer;
      return { ...answer, capture: (await this.captures.view(sessionId, handleId, actsOn))?.view ?? capture.view };
    });
  }

  /**
   * stopGatewayConnection: hang up and detach the handle when given, then destroy the session. A handle that
   * has no PeerConnection yet is not an error; the session's destruction is what the answer reports.
   */
  stop(caller: GatewayCaller | null, sessionId: number, handleId?: number): Promise<JanusAnswer> {
    return mapped(async () => {
      const actsOn = caller && actsOnOf(caller);
      if (handleId === undefined) await this.sessions.check(sessionId, actsOn);
      else await this.sessions.checkHandle(sessionId, handleId, actsOn);
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
      try {
        const answer = await this.janus.destroy(sessionId);
        await this.sessions.forget(sessionId);
        return answer;
      } catch (error) {
        if (error instanceof JanusApiError && error.code === 458) await this.sessions.forget(sessionId);
        throw error;
      } finally {
        // Not `gone` here: the row went above, or stays when Janus could not be asked (the heartbeat judges it).
        tracker?.end('stopped by the client');
      }
    });
  }

  /**
   * The heartbeat's part: rows of sessions Janus no longer has stop counting against their owners (their
   * node died before it could say so). Never fails the heartbeat: an unreachable gateway is tried next time.
   */
  async prune(): Promise<void> {
    await this.sessions
      .prune(async () => ((await this.admin.listSessions()).sessions as number[] | undefined) ?? [])
      .catch((error: unknown) =>
        this.ctx.log.debug('gateway sessions not pruned', { error: (error as Error)?.message }),
      );
  }

  /** Stop every tracker (at shutdown; the sessions themselves then time out in Janus), once the captures' last states are written. */
  async close(): Promise<void> {
    await this.captures.close();
    this.trackers.endAll('service closing');
  }

  /**
   * A session made in Janus for `owner` if the caps admit it (with a handle on `plugin` when given: the answer
   * is then the attach answer with `session_id`), recorded with its handle in one step (the caps counted again
   * with the write), then tracked. One that failed to attach, or lost a race for the last place, is destroyed.
   */
  private async createOwned(owner: string, plugin?: string): Promise<JanusAnswer> {
    await this.sessions.admit(owner);
    const created = await this.janus.create();
    const sessionId = created.data!.id!;
    let answer = created;
    try {
      if (plugin) answer = { ...(await this.janus.attach(sessionId, plugin)), session_id: sessionId };
      const handle = plugin ? { handleId: answer.data!.id!, plugin } : undefined;
      await this.sessions.record(owner, sessionId, handle);
    } catch (error) {
      await this.janus.destroy(sessionId).catch(() => {});
      throw error;
    }
    const tracker = this.trackers.track(sessionId);
    if (plugin) tracker.rememberPlugin(answer.data!.id!, plugin);
    return answer;
  }

  /** A handle attached to `actsOn`'s own session (any, on /admin) if the session has room, then counted. */
  private async attachCounted(actsOn: string | null, sessionId: number, plugin: string): Promise<JanusAnswer> {
    const counted = await this.sessions.admitHandle(sessionId, actsOn);
    const tracker = this.trackers.track(sessionId);
    tracker.touch();
    const answer = await this.janus.attach(sessionId, plugin);
    const handleId = answer.data!.id!;
    if (counted) {
      try {
        await this.sessions.recordHandle(sessionId, handleId, plugin);
      } catch (error) {
        await this.janus.detach(sessionId, handleId).catch(() => {});
        throw error;
      }
    }
    tracker.rememberPlugin(handleId, plugin);
    return answer;
  }

  /** The plugin of a handle attached elsewhere (another node, or before a restart of this one). */
  private async pluginOf(sessionId: number, handleId: number): Promise<string | undefined> {
    const info = await this.admin.handleInfo(sessionId, handleId);
    return (info.info as { plugin?: string } | undefined)?.plugin;
  }
}
