/**
 * The VideoRoom requests of a capture session (Janus's janus_videoroom.c documents each): a private room of
 * one publisher per session, the client's offer published with `joinandconfigure`, the published video (and
 * audio) forwarded as plain RTP to the sidecar's decoder on loopback, and the room destroyed at the end. Room
 * creation and forwarding carry the admin key (the API secret), so a client can do neither by itself.
 */
export const VIDEOROOM = 'janus.plugin.videoroom';

/** The payload type the forwarded video carries, whatever the browser negotiated: the decoder's SDP names it. */
export const FORWARDED_VIDEO_PT = 96;
/** The same for the forwarded audio (Opus) of multimodal sessions. */
export const FORWARDED_AUDIO_PT = 111;

/** A room number of our own: random, within 2^53 for JavaScript, out of the way of configured rooms. */
export function newRoomNumber(): number {
  return 1_000_000 + Math.floor(Math.random() * (Number.MAX_SAFE_INTEGER - 1_000_000));
}

export function createRoom(room: number, adminKey: string): Record<string, unknown> {
  return {
    request: 'create',
    room,
    admin_key: adminKey,
    permanent: false,
    is_private: true,
    publishers: 1,
    // VP8 is what every browser sends and what the decoder reads; Opus for the voice of multimodal sessions.
    videocodec: 'vp8',
    audiocodec: 'opus',
    // A keyframe request every 2 s: the decoder can start from any moment of the stream.
    fir_freq: 2,
    bitrate: 1_500_000,
    notify_joining: false,
  };
}

export function joinAndPublish(room: number): Record<string, unknown> {
  return { request: 'joinandconfigure', ptype: 'publisher', room, display: 'bims-capture' };
}

/** One forwarding request for the publisher's streams: the video (and, in multimodal sessions, the audio) each to its decoder. */
export function forwardMedia(
  room: number,
  publisherId: number,
  adminKey: string,
  host: string,
  streams: { mid: string; port: number; pt: number }[],
): Record<string, unknown> {
  return {
    request: 'rtp_forward',
    room,
    publisher_id: publisherId,
    admin_key: adminKey,
    host,
    host_family: 'ipv4',
    streams,
  };
}

/** The VideoRoom plugin's error code for a room it does not have (JANUS_VIDEOROOM_ERROR_NO_SUCH_ROOM). */
export const ROOM_NOT_FOUND = 426;

export function destroyRoom(room: number, adminKey: string): Record<string, unknown> {
  return { request: 'destroy', room, admin_key: adminKey, permanent: false };
}

/** The mid of the first video m-line of an SDP (the one the browser's camera is published on), if any. */
export function videoMidOf(sdp: string): string | undefined {
  return midOf(sdp, 'video');
}

/** The mid of the first audio m-line (the microphone), if any. */
export function audioMidOf(sdp: string): string | undefined {
  return midOf(sdp, 'audio');
}

function midOf(sdp: string, kind: 'audio' | 'video'): string | undefined {
  const sections = sdp.split(/\r?\nm=/);
  for (const section of sections.slice(1)) {
    if (!section.startsWith(`${kind} `) || /\r?\na=inactive/.test(section) || /^[a-z]+ 0 /.test(section)) continue;
    const mid = /\r?\na=mid:([^\r\n]+)/.exec(section)?.[1];
    if (mid) return mid.trim();
  }
  return undefined;
}

/** Ask the publisher's camera for a keyframe now (Janus sends it a PLI): the decoder can start from it. */
export function requestKeyframe(): Record<string, unknown> {
  return { request: 'configure', keyframe: true };
}
