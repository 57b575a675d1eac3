/**
 * What the page saw of a capture's WebRTC, in epoch milliseconds (the service's event times are on the same
 * machine's clock): installed in the page before the SDK runs (bench/capture-stages.ts), by wrapping
 * RTCPeerConnection and fetch. Keyframes are read from the sender's statistics every 20 ms, so each keyframe's
 * time is known to within that.
 */
export interface PageTiming {
  marks: Partial<
    Record<
      | 'connectSent'
      | 'connectAnswered'
      | 'iceGathered'
      | 'iceConnected'
      | 'dtlsConnected'
      | 'firstRtpSent'
      | 'firstKeyframeRequest'
      | 'outcome',
      number
    >
  >;
  /** When each keyframe the camera's encoder made was first seen in its statistics. */
  keyframes: number[];
  /**
   * The video sender as last seen before the PeerConnection closed: the rate it was asked to send at most
   * (its encoding's maxFramerate, null: none asked), the frames it encoded, and from the poll that first saw
   * its packets on, the frames the camera's track delivered (MediaStreamTrack.stats) and those it encoded.
   */
  video: {
    maxFramerate: number | null;
    framesEncoded: number;
    sinceFirstPacket: { cameraFrames: number; framesEncoded: number };
  };
}

/** Runs in the page (serialised by Playwright: self-contained, no imports). */
export function installPageTiming(): void {
  const w = window as unknown as { __captureTiming: PageTiming; RTCPeerConnection: typeof RTCPeerConnection };
  const timing: PageTiming = {
    marks: {},
    keyframes: [],
    video: { maxFramerate: null, framesEncoded: 0, sinceFirstPacket: { cameraFrames: 0, framesEncoded: 0 } },
  };
  w.__captureTiming = timing;
  const mark = (name: keyof PageTiming['marks']) => {
    timing.marks[name] ??= Date.now();
  };
  const realFetch = window.fetch.bind(window);
  window.fetch = async (input, init) => {
    const connect = String(input).includes('/gateway/connect');
    if (connect) mark('connectSent');
    const res = await realFetch(input, init);
    if (connect) mark('connectAnswered');
    return res;
  };
  const Real = window.RTCPeerConnection;
  // biome-ignore lint/complexity/useArrowFunction: a constructor, called with new
  const Wrapped = function (config?: RTCConfiguration) {
    const pc = new Real(config);
    pc.addEventListener('icegatheringstatechange', () => pc.iceGatheringState === 'complete' && mark('iceGathered'));
    pc.addEventListener('iceconnectionstatechange', () => {
      if (pc.iceConnectionState === 'connected' || pc.iceConnectionState === 'completed') mark('iceConnected');
    });
    pc.addEventListener('connectionstatechange', () => pc.connectionState === 'connected' && mark('dtlsConnected'));
    let keyframes = 0;
    let sent: { delivered: number; encoded: number } | undefined;
    const poll = setInterval(async () => {
      if (pc.connectionState === 'closed') return clearInterval(poll);
      const stats = await pc.getStats().catch(() => null);
      const video = pc.getSenders().find((sender) => sender.track?.kind === 'video');
      if (video) timing.video.maxFramerate = video.getParameters().encodings?.[0]?.maxFramerate ?? null;
      const delivered = Number((video?.track as { stats?: { deliveredFrames?: number } })?.stats?.deliveredFrames);
      stats?.forEach((s: Record<string, number | string>) => {
        if (s.type !== 'outbound-rtp' || s.kind !== 'video') return;
        if (Number(s.packetsSent) > 0) {
          mark('firstRtpSent');
          const encoded = Number(s.framesEncoded ?? 0);
          sent ??= { delivered, encoded };
          timing.video.framesEncoded = encoded;
          timing.video.sinceFirstPacket = {
            cameraFrames: delivered - sent.delivered,
            framesEncoded: encoded - sent.encoded,
          };
        }
        if (Number(s.pliCount) + Number(s.firCount) > 0) mark('firstKeyframeRequest');
        const k = Number(s.keyFramesEncoded ?? 0);
        if (k > keyframes) {
          keyframes = k;
          timing.keyframes.push(Date.now());
        }
      });
    }, 20);
    return pc;
  } as unknown as typeof RTCPeerConnection;
  Wrapped.prototype = Real.prototype;
  w.RTCPeerConnection = Wrapped;
}
