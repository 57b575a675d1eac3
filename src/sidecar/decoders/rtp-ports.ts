import { createSocket } from 'node:dgram';

/** Bind a UDP socket on loopback to `port` (0: any), resolving with the socket, or null when taken. */
function bindUdp(port: number): Promise<ReturnType<typeof createSocket> | null> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    socket.once('error', () => {
      socket.close();
      resolve(null);
    });
    socket.bind(port, '127.0.0.1', () => resolve(socket));
  });
}

/**
 * An even loopback UDP port whose odd neighbour is free too: ffmpeg receives RTP on the port of the SDP and
 * RTCP on the next one. Both are probed by binding them, then released for ffmpeg to take a moment later.
 */
export async function freeRtpPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const probe = await bindUdp(0);
    if (!probe) continue;
    const port = probe.address().port;
    probe.close();
    const even = port % 2 === 0 ? port : port + 1;
    if (even + 1 > 65535) continue;
    const [rtp, rtcp] = await Promise.all([bindUdp(even), bindUdp(even + 1)]);
    rtp?.close();
    rtcp?.close();
    if (rtp && rtcp) return even;
  }
  throw new Error('no free pair of loopback UDP ports for RTP');
}
