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
}

/** Runs in the page (serialised by Playwright: self-contained, no imports). */
export function installPageTiming(): void {
  const w = window as unknown as { __captureTiming: PageTiming; RTCPeerConnection: typeof RTCPeerConnection };
  const timing: PageTiming = { marks: {}, keyframes: [] };
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
    const poll = setInterval(async () => {
      if (pc.connectionState === 'closed') return clearInterval(poll);
      const stats = await pc.getStats().catch(() => null);
      stats?.forEach((s: Record<string, number | string>) => {
        if (s.type !== 'outbound-rtp' || s.kind !== 'video') return;
        if (Number(s.packetsSent) > 0) mark('firstRtpSent');
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
