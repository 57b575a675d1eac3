import { authorization, type Credentials } from './remote-verify.js';

/** One event of a capture session (docs/gateway-capture.md): guidance while streaming, then the outcome. */
export interface CaptureEvent {
  at: string;
  type: string;
  [key: string]: unknown;
}

/** The outcome: DONE with the operation's status, score and UUID, or TIMEOUT, or FAILED. */
export interface CaptureOutcome extends CaptureEvent {
  type: 'DONE' | 'TIMEOUT' | 'FAILED';
  status: string;
  operationUuid?: string;
  subjectId?: string;
  score?: number;
  /**
   * Why the capture was refused or ended without an operation: a stable code where it refused (TOO_DARK,
   * TOO_FAR, TURNED_AWAY, EYES_CLOSED, TWO_FACES, NO_LIVE_PERSON, LOW_QUALITY, ACTIVE_LIVENESS_FAILED), else words.
   */
  reason?: string;
  /** With a refusal code: the reason in words to show the person (docs/gateway-capture.md, "Refusals"). */
  text?: string;
}

/**
 * With `activeLiveness` in the params: an instruction to show the subject at once, in their own terms (turn to
 * YOUR left; a mirrored preview shows that as a turn to the screen's left). CHALLENGE_PASSED or CHALLENGE_FAILED
 * (`reason`, `retriesLeft`) follows it.
 */
export interface CaptureInstruction extends CaptureEvent {
  type: 'INSTRUCTION';
  instruction: 'TURN_LEFT' | 'TURN_RIGHT' | 'BLINK';
  step: number;
  steps: number;
  /** Time to follow it, from when the service gave it. */
  withinMs: number;
}

export const isCaptureInstruction = (event: CaptureEvent): event is CaptureInstruction => event.type === 'INSTRUCTION';

export interface CaptureOptions {
  /** The camera (and microphone) stream, e.g. from navigator.mediaDevices.getUserMedia({ video: true }). */
  stream: MediaStream;
  /** The session's init params, e.g. { kind: 'FV', purpose: 'VERIFY', subjectId: 'alice' }. */
  params: Record<string, unknown>;
  /** Called with each event as it is read (face found, move closer, ...). */
  onEvent?: (event: CaptureEvent) => void;
  /** API prefix of the gateway operations for the calls that open the session: '/user' (default), '/admin' or ''. */
  surface?: '/user' | '/admin' | '';
  /** How often the session's events are read, in ms (default 300). */
  pollMs?: number;
  /** Aborting it stops the gateway session (its capture ends without an operation); the call rejects with a CaptureError. */
  signal?: AbortSignal;
}

export class CaptureError extends Error {
  override name = 'CaptureError';
  constructor(
    message: string,
    readonly status?: number,
    readonly problem?: unknown,
  ) {
    super(message);
  }
}

/**
 * Run a biometric capture over the media gateway: create a session with a VideoRoom handle, send the offer
 * with the init params (connect), trickle the candidates, follow the capture's events in the answers to
 * further trickles (`capture` in trickleGateway's answer) and resolve with the outcome: DONE carries the
 * operation's status, score and `operationUuid`, which getOperationByUUID reads. The gateway ends the session
 * by itself; the PeerConnection is closed here.
 *
 * @example
 * const stream = await navigator.mediaDevices.getUserMedia({ video: true });
 * const outcome = await captureWithGateway('https://bims.example', { accessToken }, {
 *   stream, params: { kind: 'FV', purpose: 'VERIFY', subjectId: 'alice' }, onEvent: (e) => show(e.type),
 * });
 * if (outcome.type === 'DONE' && outcome.status === 'SUCCESS') welcome();
 */
export async function captureWithGateway(
  baseUrl: string,
  credentials: Credentials,
  options: CaptureOptions,
): Promise<CaptureOutcome> {
  const base = baseUrl.replace(/\/$/, '');
  const prefix = options.surface ?? '/user';
  const call = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: authorization(credentials),
        accept: 'application/json',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const json = await res.json().catch(() => null);
    if (!res.ok)
      throw new CaptureError(
        `${path} answered ${res.status}${(json as { detail?: string } | null)?.detail ? `: ${(json as { detail: string }).detail}` : ''}`,
        res.status,
        json,
      );
    return json;
  };
  const pc = new RTCPeerConnection({ iceServers: [] });
  try {
    const candidates: RTCIceCandidateInit[] = [];
    const gathered = new Promise<void>((resolve) => {
      pc.onicecandidate = (event) => (event.candidate ? candidates.push(event.candidate.toJSON()) : resolve());
    });
    for (const track of options.stream.getTracks()) pc.addTrack(track, options.stream);
    const attached = await call('POST', `${prefix}/gateway/create-and-attach?plugin=janus.plugin.videoroom`);
    const sessionId: number = attached.session_id;
    const handleId: number = attached.data.id;
    const offer = await pc.createOffer();
    await pc.setLocalDescription(offer);
    const connected = await call('POST', `${prefix}/gateway/connect`, {
      sessionId,
      handleId,
      jsep: { type: offer.type, sdp: offer.sdp },
      params: options.params,
    });
    // Before any media flows: frames the service would not analyse are neither encoded nor sent.
    await sendAtMost(pc, analysedPerSecond(connected, options.params));
    await pc.setRemoteDescription(connected.jsep);
    await gathered;
    if (candidates.length) await call('POST', `${prefix}/gateway/trickle`, { sessionId, handleId, candidates });
    await call('POST', `${prefix}/gateway/trickle`, { sessionId, handleId, completed: true });

    let seen = 0;
    const signal = options.signal;
    for (;;) {
      if (signal?.aborted) {
        await call('POST', `${prefix}/gateway/stop`, { sessionId, handleId }).catch(() => {});
        throw new CaptureError('The capture was stopped');
      }
      // Each trickle on the capture's handle answers with the capture's events so far (on every surface, for
      // the account that started it); a repeated `completed` changes nothing at the gateway.
      const answer = await call('POST', `${prefix}/gateway/trickle`, { sessionId, handleId, completed: true });
      const events = (answer.capture?.events ?? []) as CaptureEvent[];
      for (const event of events.slice(seen)) options.onEvent?.(event);
      seen = Math.max(seen, events.length);
      const last = events.at(-1);
      if (last && (last.type === 'DONE' || last.type === 'TIMEOUT' || last.type === 'FAILED'))
        return last as CaptureOutcome;
      // The wait ends early when the caller aborts, so a stop is sent at once.
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, options.pollMs ?? 300);
        signal?.addEventListener('abort', done);
      });
    }
  } finally {
    pc.close();
  }
}

/**
 * The rate the service analyses the capture's frames at: its connect answer says it (the STARTED event's
 * `framesPerSecond`); from a service that does not, the params' own, else nothing known.
 */
function analysedPerSecond(connected: { capture?: { events?: CaptureEvent[] } }, params: Record<string, unknown>) {
  const said = connected.capture?.events?.find((e) => e.type === 'STARTED')?.framesPerSecond;
  const rate = typeof said === 'number' ? said : params.framesPerSecond;
  return typeof rate === 'number' && rate > 0 ? rate : undefined;
}

/**
 * Ask the browser to encode and send the video at most `framesPerSecond` (RTCRtpSender's maxFramerate): a camera
 * gives 30 frames a second where the service samples 5 (the default), and every frame sent costs the client's
 * encoder, the network and the service's decoder, which threw the rest away. The resolution stays: the service's
 * gates measure the face at the camera's size (up to 640 px). Where the browser refuses, the service still takes
 * only its rate from what comes.
 */
async function sendAtMost(pc: RTCPeerConnection, framesPerSecond: number | undefined): Promise<void> {
  if (!framesPerSecond) return;
  for (const sender of pc.getSenders()) {
    if (sender.track?.kind !== 'video') continue;
    const parameters = sender.getParameters();
    if (!parameters.encodings?.length) continue;
    for (const encoding of parameters.encodings) encoding.maxFramerate = framesPerSecond;
    await sender.setParameters(parameters).catch(() => {});
  }
}
