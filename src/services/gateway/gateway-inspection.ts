import type { JanusAnswer } from '../../gateway/janus-answer.js';
import type { CaptureRegistry } from '../capture/capture-registry.js';
import { mapped } from './errors.js';
import type { GatewayClients } from './gateway-clients.js';
import { actsOnOf, type GatewayCaller } from './gateway-owner.js';
import type { SessionRegistry } from './session-registry.js';
import type { SessionTrackers } from './session-trackers.js';
import { applySettings, type GatewaySettings } from './settings.js';

/**
 * What administrators read and set of the gateway (getInfo, getListSession, getSession, getSessionRaw,
 * getStatus, setSettings), on /admin and the root surface. On the root surface a session's details answer
 * only to the account that made it (docs/media-gateway.md, "Whose session"), and the list shows only its own.
 */
export class GatewayInspection {
  constructor(
    private readonly clients: GatewayClients,
    private readonly trackers: SessionTrackers,
    private readonly sessions: SessionRegistry,
    private readonly captures: CaptureRegistry,
  ) {}

  /** getInfo: Janus's `info`, plus what the sidecar says about Janus's supervision (never its secrets). */
  info(): Promise<JanusAnswer> {
    return mapped(async () => {
      const report = await this.clients.sidecar.report();
      const answer = await this.clients.janus.info();
      const { state, pid, since, restarts, lastError, version } = report;
      return { ...answer, supervisor: { state, pid, since, restarts, lastError, version } };
    });
  }

  /** getListSession: Admin API `list_sessions`; on the root surface only the caller's own sessions. */
  listSessions(caller: GatewayCaller): Promise<JanusAnswer> {
    return mapped(async () => {
      const answer = await this.clients.admin.listSessions();
      const actsOn = actsOnOf(caller);
      if (actsOn === null) return answer;
      const own = new Set(await this.sessions.idsOf(actsOn));
      return { ...answer, sessions: ((answer.sessions as number[] | undefined) ?? []).filter((id) => own.has(id)) };
    });
  }

  /**
   * getSession: Admin API `list_handles` (or `handle_info` for one handle), with the events this service saw
   * on the session (`webrtcup`, `media`, `hangup` ...), those of its capture sessions (read from the database,
   * so every node shows them) and the handles whose PeerConnection is up.
   */
  session(caller: GatewayCaller, sessionId: number, handleId?: number): Promise<JanusAnswer> {
    return mapped(async () => {
      const answer = await this.sessionRaw(caller, sessionId, handleId);
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
  sessionRaw(caller: GatewayCaller, sessionId: number, handleId?: number): Promise<JanusAnswer> {
    return mapped(async () => {
      const actsOn = actsOnOf(caller);
      if (handleId === undefined) await this.sessions.check(sessionId, actsOn);
      else await this.sessions.checkHandle(sessionId, handleId, actsOn);
      return handleId === undefined
        ? this.clients.admin.listHandles(sessionId)
        : this.clients.admin.handleInfo(sessionId, handleId);
    });
  }

  /** getStatus: Admin API `get_status`. */
  status(): Promise<JanusAnswer> {
    return mapped(() => this.clients.admin.getStatus());
  }

  /** setSettings: one Admin API request per setting given, then `get_status` to show the result. */
  settings(settings: GatewaySettings): Promise<JanusAnswer> {
    return mapped(async () => {
      await applySettings(this.clients.admin, settings);
      if (settings.sessionTimeout !== undefined) this.trackers.sessionTimeoutSeconds = settings.sessionTimeout;
      return this.clients.admin.getStatus();
    });
  }
}
