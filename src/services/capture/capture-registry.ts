import type { JanusAnswer } from '../../gateway/janus-answer.js';
import type { Services } from '../index.js';
import { conflict, invalid, notFound } from '../errors.js';
import type { GatewayService, ConnectInput } from '../gateway/gateway-service.js';
import type { SessionTracker } from '../gateway/session-tracker.js';
import { ownerOf } from '../ownership.js';
import { CaptureSession, type CaptureCaller, type CaptureEvent, type CaptureMedia, type CaptureParams, type CaptureResult } from './capture-session.js';
import { audioMidOf, createRoom, destroyRoom, forwardMedia, FORWARDED_AUDIO_PT, FORWARDED_VIDEO_PT, joinAndPublish, newRoomNumber, videoMidOf } from './videoroom.js';

/** What a connect needs to start a capture: the services the operation runs with, and who asked. */
export interface CaptureStarter {
  services: Services;
  caller: CaptureCaller;
}

interface Entry {
  session: CaptureSession;
  sessionId: number;
  handleId: number;
  /** The account that started it (null for the root surface's administrator, who has none). */
  accountId: number | null;
}

/** What a client reads of its capture: where it is, every event so far (oldest first) and the outcome. */
export interface CaptureView {
  state: CaptureSession['state'];
  purpose: CaptureParams['purpose'];
  events: CaptureEvent[];
  result?: CaptureResult;
}

/** Finished captures stay readable this long, so the client can read the outcome after the session ended. */
const KEEP_FINISHED_MS = 10 * 60_000;
const MAX_KEPT = 1000;

/**
 * The capture sessions of this node, by gateway session and handle. A connect on a VideoRoom handle makes a
 * private room, publishes the client's offer into it and starts a {@link CaptureSession} whose frames come
 * from the sidecar's decoder once the PeerConnection is up; at the end the forwarding, the decoder, the room
 * and the gateway session are released. Each capture is readable by the account that started it (and admins),
 * in the answer to trickleGateway on its handle (see {@link view}).
 */
export class CaptureRegistry {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly gateway: GatewayService) {}

  async connect(input: ConnectInput, tracker: SessionTracker, starter: CaptureStarter): Promise<JanusAnswer> {
    const { sessionId, handleId } = input;
    const params = input.params as CaptureParams; // validated by ConnectData
    const mid = videoMidOf(String(input.jsep.sdp ?? ''));
    if (!mid) throw invalid('body.jsep.sdp', 'the offer carries no video track to capture from');
    const wantsVoice = 'modalities' in params && params.modalities.includes('VOICE');
    const audioMid = wantsVoice ? audioMidOf(String(input.jsep.sdp ?? '')) : undefined;
    if (wantsVoice && !audioMid) throw invalid('body.jsep.sdp', 'the offer carries no audio track, and the session captures the voice');
    await this.checkSubject(starter.services, params);
    const adminKey = await this.gateway.adminKey();
    const room = newRoomNumber();
    await this.gateway.pluginRequest(sessionId, handleId, createRoom(room, adminKey));
    let answer: JanusAnswer;
    try {
      answer = await this.gateway.messageForEvent(tracker, sessionId, handleId, joinAndPublish(room), input.jsep);
    } catch (error) {
      await this.gateway.pluginRequest(sessionId, handleId, destroyRoom(room, adminKey)).catch(() => {});
      throw error;
    }
    const publisherId = Number(answer.plugindata?.data?.id);
    const media = this.media({ sessionId, handleId, room, publisherId, mid, audioMid, adminKey, params, tracker });
    const session = new CaptureSession(starter.services, params, starter.caller, media, (event) => tracker.note(captureEvent(sessionId, handleId, event)));
    this.prune();
    this.entries.get(keyOf(sessionId, handleId))?.session.cancel('replaced by a new connect');
    this.entries.set(keyOf(sessionId, handleId), { session, sessionId, handleId, accountId: starter.caller.principal.accountId });
    session.start();
    return answer;
  }

  /**
   * The capture on a handle as its client reads it, or undefined when the handle has none on this node. On
   * the user surface only the account that started it reads it (as operations are owned): another account is
   * told there is no such capture, so it can neither follow nor disturb it.
   */
  view(sessionId: number, handleId: number, caller: CaptureCaller): { view: CaptureView; over: boolean } | undefined {
    const entry = this.entries.get(keyOf(sessionId, handleId));
    if (!entry) return undefined;
    const owner = ownerOf(caller);
    if (owner && (owner.accountId === null || owner.accountId !== entry.accountId)) throw notFound(`A capture session on handle ${handleId} of gateway session ${sessionId}`);
    const { session } = entry;
    return {
      over: session.isOver,
      view: { state: session.state, purpose: session.params.purpose, events: [...session.events], ...(session.result ? { result: session.result } : {}) },
    };
  }

  /** The client stopped the gateway session: its captures end without an operation. */
  cancel(sessionId: number, reason: string): void {
    for (const entry of this.entries.values()) if (entry.sessionId === sessionId) entry.session.cancel(reason);
  }

  close(): void {
    for (const entry of this.entries.values()) entry.session.cancel('service closing');
  }

  /**
   * The media of one publisher: after webrtcup, a decoder on the sidecar for the video (and one for the audio
   * of a multimodal session) and Janus forwarding the streams to them, opened once for both readers.
   */
  private media(m: { sessionId: number; handleId: number; room: number; publisherId: number; mid: string; audioMid?: string; adminKey: string; params: CaptureParams; tracker: SessionTracker }): CaptureMedia {
    const gateway = this.gateway;
    const decoderIds: string[] = [];
    let opening: Promise<{ video: string; audio?: string } | null> | null = null;
    const open = (signal: AbortSignal) => (opening ??= (async () => {
      const up = m.tracker.waitFor((e) => e.janus === 'webrtcup' && e.sender === m.handleId, m.params.timeoutSeconds * 1000);
      const aborted = new Promise<null>((resolve) => signal.addEventListener('abort', () => resolve(null), { once: true }));
      const event = await Promise.race([up.promise, aborted]);
      up.cancel();
      if (!event || signal.aborted) return null;
      const maxSeconds = m.params.timeoutSeconds + 30;
      const video = await gateway.decoders.open({ codec: 'VP8', payloadType: FORWARDED_VIDEO_PT, framesPerSecond: m.params.framesPerSecond, maxSeconds });
      decoderIds.push(video.id);
      const streams = [{ mid: m.mid, port: video.port, pt: FORWARDED_VIDEO_PT }];
      let audio: string | undefined;
      if (m.audioMid) {
        const decoder = await gateway.decoders.open({ codec: 'OPUS', payloadType: FORWARDED_AUDIO_PT, framesPerSecond: 5, maxSeconds });
        decoderIds.push(decoder.id);
        audio = decoder.id;
        streams.push({ mid: m.audioMid, port: decoder.port, pt: FORWARDED_AUDIO_PT });
      }
      await gateway.pluginRequest(m.sessionId, m.handleId, forwardMedia(m.room, m.publisherId, m.adminKey, video.host, streams));
      return { video: video.id, ...(audio ? { audio } : {}) };
    })());
    return {
      async *frames(signal) {
        const opened = await open(signal);
        if (opened) yield* gateway.decoders.frames(opened.video, signal);
      },
      ...(m.audioMid ? {
        async *audio(signal: AbortSignal) {
          const opened = await open(signal);
          if (opened?.audio) yield* gateway.decoders.frames(opened.audio, signal);
        },
      } : {}),
      async release() {
        for (const id of decoderIds) await gateway.decoders.close(id);
        // The media ends at once: the room (and with it the publisher) and the PeerConnection go.
        await gateway.pluginRequest(m.sessionId, m.handleId, destroyRoom(m.room, m.adminKey)).catch(() => {});
        await gateway.hangup(m.sessionId, m.handleId).catch(() => {});
        // The session itself lingers a little, so its client can read the outcome, then ends by itself:
        // detached and destroyed, as stopGatewayConnection does (unless the client did it first).
        const timer = setTimeout(() => void gateway.stop(m.sessionId, m.handleId).catch(() => {}), gateway.captureLingerMs);
        timer.unref?.();
      },
    };
  }

  /** As the JSON path would refuse them, before any media flows: a VERIFY of nobody, an ENROLL of a subjectId taken. */
  private async checkSubject(services: Services, params: CaptureParams): Promise<void> {
    if (params.purpose !== 'VERIFY' && params.purpose !== 'ENROLL') return;
    const row = await services.ctx.db.selectFrom('subjects').select('id').where('subject_id', '=', params.subjectId!).executeTakeFirst();
    if (params.purpose === 'VERIFY' && !row) throw notFound(`Subject '${params.subjectId}'`);
    if (params.purpose === 'ENROLL' && row) throw conflict(`A subject with subjectId '${params.subjectId}' already exists`);
  }

  private prune(): void {
    const now = Date.now();
    for (const [key, entry] of this.entries) {
      const over = entry.session.isOver;
      if (over && now - (entry.session.endedAt ?? now) > KEEP_FINISHED_MS) this.entries.delete(key);
    }
    while (this.entries.size >= MAX_KEPT) {
      const oldest = [...this.entries].find(([, e]) => e.session.isOver)?.[0] ?? this.entries.keys().next().value!;
      this.entries.delete(oldest);
    }
  }
}

const keyOf = (sessionId: number, handleId: number) => `${sessionId}/${handleId}`;

/**
 * A capture event as the gateway session's events carry it: shaped like a plugin event, from the plugin
 * "bims.capture" (this service, not Janus), with the event's fields as its data.
 */
function captureEvent(sessionId: number, handleId: number, event: CaptureEvent): JanusAnswer {
  return { janus: 'event', session_id: sessionId, sender: handleId, plugindata: { plugin: 'bims.capture', data: { ...event } } };
}
