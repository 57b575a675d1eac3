import { GatewayProtocolError, GatewayUnavailableError, JanusApiError } from './errors.js';
import { exchangeJson } from './http.js';
import type { IceCandidateInit, JanusAnswer, TricklePayload } from './janus-answer.js';
import type { JanusEndpoints } from '../protocols/sidecar.js';

interface JanusClientOptions {
  /** Where Janus is; asked before every request (the sidecar client caches it). */
  endpoints: () => Promise<JanusEndpoints>;
  /** Bound on each request; long polls have their own. */
  timeoutMs: number;
  /** Called when Janus could not be reached, so the endpoint cache can be dropped. */
  onUnreachable?: () => void;
}

/** Janus holds a long poll open for 30 seconds before answering with a keepalive; we wait a little longer. */
const LONG_POLL_MS = 40_000;

/**
 * A client of the Janus API over its HTTP transport (https://janus.conf.meetecho.com/docs/rest.html):
 * POST to /janus, /janus/{session} or /janus/{session}/{handle}; events come from a long poll GET on the
 * session. Every request carries the API secret; an answer `{"janus": "error"}` becomes a {@link JanusApiError}.
 */
export class JanusClient {
  constructor(private readonly options: JanusClientOptions) {}

  /** `info`: the server's name, version, plugins and transports. Needs no session and no secret. */
  async info(): Promise<JanusAnswer> {
    const { url } = await this.options.endpoints();
    const { body } = await this.guard(() =>
      exchangeJson('janus', `${url}/info`, { method: 'GET' }, this.options.timeoutMs),
    );
    return this.checked(body);
  }

  /** `create`: a new session; `data.id` is its identifier. */
  create(): Promise<JanusAnswer> {
    return this.post([], { janus: 'create' });
  }

  /** `attach`: a handle on `plugin` within the session; `data.id` is its identifier. */
  attach(sessionId: number, plugin: string, opaqueId?: string): Promise<JanusAnswer> {
    return this.post([sessionId], { janus: 'attach', plugin, ...(opaqueId ? { opaque_id: opaqueId } : {}) });
  }

  /**
   * `message`: a request to the plugin, optionally with a JSEP offer or answer. Plugins usually answer `ack` at
   * once and send the result (with the JSEP answer) later as an event carrying the same transaction.
   */
  message(
    sessionId: number,
    handleId: number,
    body: Record<string, unknown>,
    jsep?: Record<string, unknown>,
    transaction?: string,
  ): Promise<JanusAnswer> {
    return this.post([sessionId, handleId], { janus: 'message', body, ...(jsep ? { jsep } : {}) }, transaction);
  }

  /** `trickle`: ICE candidates for the handle's PeerConnection, or `{completed: true}` when gathering ended. */
  trickle(sessionId: number, handleId: number, payload: TricklePayload): Promise<JanusAnswer> {
    const request: Record<string, unknown> = { janus: 'trickle' };
    if ('candidate' in payload) request.candidate = clean(payload.candidate);
    else if ('candidates' in payload) request.candidates = payload.candidates.map(clean);
    else request.candidate = { completed: true };
    return this.post([sessionId, handleId], request);
  }

  /** `hangup`: closes the handle's PeerConnection but keeps the handle. */
  hangup(sessionId: number, handleId: number): Promise<JanusAnswer> {
    return this.post([sessionId, handleId], { janus: 'hangup' });
  }

  /** `detach`: removes the handle from the plugin. */
  detach(sessionId: number, handleId: number): Promise<JanusAnswer> {
    return this.post([sessionId, handleId], { janus: 'detach' });
  }

  /** `destroy`: ends the session with all its handles. */
  destroy(sessionId: number): Promise<JanusAnswer> {
    return this.post([sessionId], { janus: 'destroy' });
  }

  /** `keepalive`: resets the session's timeout. */
  keepalive(sessionId: number): Promise<JanusAnswer> {
    return this.post([sessionId], { janus: 'keepalive' });
  }

  /**
   * Long poll for the session's events (up to `maxEvents` at once). Janus answers as soon as there is one, or
   * after 30 seconds with a `keepalive`. A session Janus does not know answers 404: a JanusApiError 458.
   */
  async poll(sessionId: number, options: { maxEvents?: number; signal?: AbortSignal } = {}): Promise<JanusAnswer[]> {
    const { url, apiSecret } = await this.options.endpoints();
    const query = new URLSearchParams({
      maxev: String(options.maxEvents ?? 10),
      rid: String(Date.now()),
      apisecret: apiSecret,
    });
    const { status, body } = await this.guard(() =>
      exchangeJson('janus', `${url}/${sessionId}?${query}`, { method: 'GET' }, LONG_POLL_MS, options.signal),
    );
    if (status === 404)
      throw new JanusApiError(458, `No such session ${sessionId}`, { janus: 'error', session_id: sessionId });
    if (status === 403) throw new GatewayProtocolError('janus', 'Janus refused our API secret', 403);
    const events = (Array.isArray(body) ? body : [body]) as JanusAnswer[];
    for (const event of events) this.checked(event);
    return events.filter((e) => e && e.janus !== 'keepalive');
  }

  private async post(path: number[], request: Record<string, unknown>, transaction?: string): Promise<JanusAnswer> {
    const { url, apiSecret } = await this.options.endpoints();
    const target = [url, ...path.map(String)].join('/');
    const { body } = await this.guard(() =>
      exchangeJson(
        'janus',
        target,
        { method: 'POST', body: { ...request, transaction: transaction ?? crypto.randomUUID(), apisecret: apiSecret } },
        this.options.timeoutMs,
      ),
    );
    return this.checked(body);
  }

  /** Drop the endpoint cache when Janus is unreachable, so the next call asks the sidecar afresh. */
  private async guard<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof GatewayUnavailableError) this.options.onUnreachable?.();
      throw error;
    }
  }

  private checked(body: unknown): JanusAnswer {
    const answer = body as JanusAnswer | null;
    if (!answer || typeof answer.janus !== 'string')
      throw new GatewayProtocolError('janus', 'Janus answered without a "janus" field');
    if (answer.janus === 'error')
      throw new JanusApiError(answer.error?.code ?? 490, answer.error?.reason ?? 'unknown error', answer);
    return answer;
  }
}

/** Janus reads only these fields of a candidate; nulls are dropped rather than sent as JSON null. */
function clean(candidate: IceCandidateInit): Record<string, unknown> {
  const out: Record<string, unknown> = { candidate: candidate.candidate };
  if (candidate.sdpMid != null) out.sdpMid = candidate.sdpMid;
  if (candidate.sdpMLineIndex != null) out.sdpMLineIndex = candidate.sdpMLineIndex;
  return out;
}
