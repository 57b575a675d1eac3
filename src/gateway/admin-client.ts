import { GatewayProtocolError, GatewayUnavailableError, JanusApiError } from './errors.js';
import { exchangeJson } from './http.js';
import type { JanusAnswer } from './janus-answer.js';
import type { JanusEndpoints } from '../protocols/sidecar.js';

/**
 * A client of Janus's Admin API (https://janus.conf.meetecho.com/docs/admin.html): POST to /admin,
 * /admin/{session} or /admin/{session}/{handle} with the admin secret. Answers are returned as Janus sent them.
 */
export class JanusAdminClient {
  constructor(
    private readonly options: {
      endpoints: () => Promise<JanusEndpoints>;
      timeoutMs: number;
      onUnreachable?: () => void;
    },
  ) {}

  /** `list_sessions`: every live session. */
  listSessions(): Promise<JanusAnswer> {
    return this.request('list_sessions');
  }

  /** `list_handles`: the handles of one session. */
  listHandles(sessionId: number): Promise<JanusAnswer> {
    return this.request('list_handles', {}, [sessionId]);
  }

  /** `handle_info`: one handle's state (plugin, flags, ICE/DTLS state, SDPs, stats). */
  handleInfo(sessionId: number, handleId: number): Promise<JanusAnswer> {
    return this.request('handle_info', {}, [sessionId, handleId]);
  }

  /** `get_status`: the server's settings that can change at run time. */
  getStatus(): Promise<JanusAnswer> {
    return this.request('get_status');
  }

  /** Any Admin API request, e.g. `request('set_log_level', { level: 4 })`. */
  async request(name: string, fields: Record<string, unknown> = {}, path: number[] = []): Promise<JanusAnswer> {
    const { adminUrl, adminSecret } = await this.options.endpoints();
    const target = [adminUrl, ...path.map(String)].join('/');
    let answer: JanusAnswer | null;
    try {
      const exchanged = await exchangeJson(
        'janus-admin',
        target,
        {
          method: 'POST',
          body: { ...fields, janus: name, transaction: crypto.randomUUID(), admin_secret: adminSecret },
        },
        this.options.timeoutMs,
      );
      answer = exchanged.body as JanusAnswer | null;
    } catch (error) {
      if (error instanceof GatewayUnavailableError) this.options.onUnreachable?.();
      throw error;
    }
    if (!answer || typeof answer.janus !== 'string')
      throw new GatewayProtocolError('janus-admin', 'the Janus Admin API answered without a "janus" field');
    if (answer.janus === 'error') {
      const { code = 490, reason = 'unknown error' } = answer.error ?? {};
      // Our admin secret is wrong: that is the gateway's fault, not the client's.
      if (code === 403)
        throw new GatewayProtocolError('janus-admin', `the Janus Admin API refused our secret: ${reason}`, 403);
      throw new JanusApiError(code, reason, answer);
    }
    return answer;
  }
}
