// The media of a capture's publisher in its VideoRoom: decoders on the sidecar started while Janus takes the
// offer, the publisher's streams forwarded to them before the connect answers (so the camera's first keyframe
// reaches them), read as frames (and audio), and everything released at the end. Used by capture-registry.ts.
import type { DecoderHandle } from '../../protocols/sidecar.js';
import { JanusApiError } from '../../gateway/errors.js';
import type { CaptureGateway } from './capture-gateway.js';
import type { SessionTracker } from '../gateway/session-tracker.js';
import type { CaptureMedia, CaptureParams } from './capture-types.js';
import { newestOnly } from './newest-frame.js';
import {
  destroyRoom,
  forwardMedia,
  FORWARDED_AUDIO_PT,
  FORWARDED_VIDEO_PT,
  requestKeyframe,
  ROOM_NOT_FOUND,
  VIDEOROOM,
} from './videoroom.js';

/** A capture's decoders: the video's, and the audio's in a session that captures the voice. */
interface CaptureDecoders {
  video: DecoderHandle;
  audio?: DecoderHandle;
}

/**
 * Start the decoders of a capture (an ffmpeg each, in the sidecar), before its room and publisher exist: a
 * decoder takes a few hundred milliseconds to start on a busy machine, which then overlaps Janus's work on the
 * offer and the PeerConnection's set-up instead of following them (the first frames used to wait for it).
 * Whatever was started is closed again if a later one fails.
 */
export async function openDecoders(
  gateway: CaptureGateway,
  m: { params: CaptureParams; owner: string; audio: boolean },
): Promise<CaptureDecoders> {
  const maxSeconds = m.params.timeoutSeconds + 30;
  const spec = { maxSeconds, owner: m.owner };
  const [video, audio] = await Promise.allSettled([
    gateway.decoders.open({
      ...spec,
      codec: 'VP8',
      payloadType: FORWARDED_VIDEO_PT,
      framesPerSecond: m.params.framesPerSecond,
    }),
    m.audio
      ? gateway.decoders.open({ ...spec, codec: 'OPUS', payloadType: FORWARDED_AUDIO_PT, framesPerSecond: 5 })
      : Promise.resolve(undefined),
  ]);
  if (video.status === 'rejected' || audio.status === 'rejected') {
    await closeDecoders(gateway, {
      video: video.status === 'fulfilled' ? video.value : undefined,
      audio: audio.status === 'fulfilled' ? audio.value : undefined,
    });
    throw video.status === 'rejected' ? video.reason : (audio as PromiseRejectedResult).reason;
  }
  return { video: video.value, ...(audio.value ? { audio: audio.value } : {}) };
}

export async function closeDecoders(
  gateway: CaptureGateway,
  decoders: { video?: DecoderHandle; audio?: DecoderHandle },
): Promise<void> {
  for (const d of [decoders.video, decoders.audio]) if (d) await gateway.decoders.close(d.id);
}

/**
 * Forward the publisher's streams to its decoders (one request), and ask the camera for a keyframe as soon as
 * Janus receives its video (at once if it already does): its first keyframe may have come before the
 * forwarding, and without one nothing can be decoded until the room's periodic request (every 2 s).
 */
export async function forwardToDecoders(
  gateway: CaptureGateway,
  m: {
    sessionId: number;
    handleId: number;
    room: number;
    publisherId: number;
    mid: string;
    audioMid?: string;
    adminKey: string;
    decoders: CaptureDecoders;
    tracker: SessionTracker;
    timeoutSeconds: number;
  },
): Promise<void> {
  const streams = [{ mid: m.mid, port: m.decoders.video.port, pt: FORWARDED_VIDEO_PT }];
  if (m.audioMid && m.decoders.audio)
    streams.push({ mid: m.audioMid, port: m.decoders.audio.port, pt: FORWARDED_AUDIO_PT });
  await gateway.pluginRequest(
    m.sessionId,
    m.handleId,
    forwardMedia(m.room, m.publisherId, m.adminKey, m.decoders.video.host, streams),
  );
  const flowing = m.tracker.waitFor(
    (e) => e.janus === 'media' && e.sender === m.handleId && e.type === 'video' && e.receiving === true,
    m.timeoutSeconds * 1000,
  );
  void flowing.promise.then((event) =>
    event ? gateway.pluginRequest(m.sessionId, m.handleId, requestKeyframe()).catch(() => {}) : undefined,
  );
}

/**
 * The media of one publisher whose streams flow to its decoders once they are `opened` and `forwarded` to (a
 * failure there fails the capture's frames, and the capture with them).
 */
export function publisherMedia(
  gateway: CaptureGateway,
  m: {
    sessionId: number;
    handleId: number;
    room: number;
    adminKey: string;
    opened: Promise<CaptureDecoders>;
    forwarded: Promise<CaptureDecoders>;
  },
): CaptureMedia {
  return {
    async *frames(signal) {
      const { video } = await m.forwarded;
      // The newest decoded frame each time the capture is ready for one (newest-frame.ts says why).
      yield* newestOnly(gateway.decoders.frames(video.id, signal));
    },
    async *audio(signal: AbortSignal) {
      const { audio } = await m.forwarded;
      if (audio) yield* gateway.decoders.frames(audio.id, signal);
    },
    async release() {
      // Whatever was opened, forwarded to or not.
      await closeDecoders(gateway, await m.opened.catch(() => ({})));
      // The media ends at once: the room (and with it the publisher) and the PeerConnection go.
      await gateway
        .pluginRequest(m.sessionId, m.handleId, destroyRoom(m.room, m.adminKey))
        .catch(async (error: unknown) => {
          // The client's handle is gone (it stopped its session, here or on another node): the room would stay
          // in Janus for good, so it is destroyed through a handle of our own.
          if (error instanceof JanusApiError && error.code === ROOM_NOT_FOUND) return;
          await gateway
            .withOwnHandle(VIDEOROOM, (s, h) => gateway.pluginRequest(s, h, destroyRoom(m.room, m.adminKey)))
            .catch((again: unknown) =>
              gateway.log.warn('capture room not destroyed', { room: m.room, error: (again as Error)?.message }),
            );
        });
      await gateway.hangup(m.sessionId, m.handleId).catch(() => {});
      // The session itself lingers a little, so its client can read the outcome, then ends by itself:
      // detached and destroyed, as stopGatewayConnection does (unless the client did it first).
      const timer = setTimeout(
        () => void gateway.stop(null, m.sessionId, m.handleId).catch(() => {}),
        gateway.captureLingerMs,
      );
      timer.unref?.();
    },
  };
}
