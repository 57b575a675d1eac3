// The media of a capture's publisher in its VideoRoom: the streams Janus forwards to the sidecar's decoders once the
// PeerConnection is up, read as frames (and audio), and everything released at the end. Used by capture-registry.ts.
import { JanusApiError } from '../../gateway/errors.js';
import type { GatewayService } from '../gateway/gateway-service.js';
import type { SessionTracker } from '../gateway/session-tracker.js';
import type { CaptureMedia, CaptureParams } from './capture-types.js';
import { newestOnly } from './newest-frame.js';
import {
  destroyRoom,
  forwardMedia,
  FORWARDED_AUDIO_PT,
  FORWARDED_VIDEO_PT,
  ROOM_NOT_FOUND,
  VIDEOROOM,
} from './videoroom.js';

/**
 * The media of one publisher: after webrtcup, a decoder on the sidecar for the video (and one for the audio
 * of a multimodal session) and Janus forwarding the streams to them, opened once for both readers.
 */
export function publisherMedia(
  gateway: GatewayService,
  m: {
    sessionId: number;
    handleId: number;
    room: number;
    publisherId: number;
    mid: string;
    audioMid?: string;
    adminKey: string;
    params: CaptureParams;
    tracker: SessionTracker;
    /** Whose capture it is: the sidecar holds each owner to its share of decoders. */
    owner: string;
  },
): CaptureMedia {
  const decoderIds: string[] = [];
  let opening: Promise<{ video: string; audio?: string } | null> | null = null;
  const open = (signal: AbortSignal) =>
    (opening ??= (async () => {
      const up = m.tracker.waitFor(
        (e) => e.janus === 'webrtcup' && e.sender === m.handleId,
        m.params.timeoutSeconds * 1000,
      );
      const aborted = new Promise<null>((resolve) =>
        signal.addEventListener('abort', () => resolve(null), { once: true }),
      );
      const event = await Promise.race([up.promise, aborted]);
      up.cancel();
      if (!event || signal.aborted) return null;
      const maxSeconds = m.params.timeoutSeconds + 30;
      const video = await gateway.decoders.open({
        codec: 'VP8',
        payloadType: FORWARDED_VIDEO_PT,
        framesPerSecond: m.params.framesPerSecond,
        maxSeconds,
        owner: m.owner,
      });
      decoderIds.push(video.id);
      const streams = [{ mid: m.mid, port: video.port, pt: FORWARDED_VIDEO_PT }];
      let audio: string | undefined;
      if (m.audioMid) {
        const decoder = await gateway.decoders.open({
          codec: 'OPUS',
          payloadType: FORWARDED_AUDIO_PT,
          framesPerSecond: 5,
          maxSeconds,
          owner: m.owner,
        });
        decoderIds.push(decoder.id);
        audio = decoder.id;
        streams.push({ mid: m.audioMid, port: decoder.port, pt: FORWARDED_AUDIO_PT });
      }
      await gateway.pluginRequest(
        m.sessionId,
        m.handleId,
        forwardMedia(m.room, m.publisherId, m.adminKey, video.host, streams),
      );
      return { video: video.id, ...(audio ? { audio } : {}) };
    })());
  return {
    async *frames(signal) {
      const opened = await open(signal);
      // The newest decoded frame each time the capture is ready for one (newest-frame.ts says why).
      if (opened) yield* newestOnly(gateway.decoders.frames(opened.video, signal));
    },
    ...(m.audioMid
      ? {
          async *audio(signal: AbortSignal) {
            const opened = await open(signal);
            if (opened?.audio) yield* gateway.decoders.frames(opened.audio, signal);
          },
        }
      : {}),
    async release() {
      for (const id of decoderIds) await gateway.decoders.close(id);
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
