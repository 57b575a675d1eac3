/**
 * Forwarded VP8 RTP (RFC 7741) reassembled into whole frames and written as an IVF stream, which ffmpeg reads
 * from its stdin at once: no probing of an RTP stream (ffmpeg's RTP input waited for up to a second of packets,
 * its `-analyzeduration`, before decoding anything), and no packet lost while ffmpeg starts, since the sidecar
 * holds the UDP port from the moment it names it. Frames before the first keyframe, and after a lost packet
 * until the next keyframe, are dropped: the decoder could not show them (Janus asks the camera for a keyframe
 * every 2 s, and BIMS asks once as soon as the stream flows).
 */
export class Vp8ToIvf {
  /** Date.now() of the first RTP packet and of the first keyframe written, for the capture's stages. */
  firstPacketAt: number | null = null;
  firstKeyframeAt: number | null = null;
  framesWritten = 0;
  framesDropped = 0;
  private parts: Buffer[] = [];
  private frameTimestamp: number | null = null;
  private broken = false;
  private expectedSeq: number | null = null;
  private waitingForKeyframe = true;
  private headerWritten = false;
  /** RTP timestamps grow by 90 kHz and wrap at 2^32: the IVF timestamps are their unwrapped distance from the first. */
  private elapsed = 0;
  private lastTimestamp = 0;

  constructor(private readonly payloadType: number) {}

  /** One UDP datagram in; the IVF bytes to write (the header before the first keyframe, then whole frames). */
  push(packet: Buffer): Buffer[] {
    const rtp = parseRtp(packet);
    if (!rtp || rtp.payloadType !== this.payloadType) return [];
    this.firstPacketAt ??= Date.now();
    const lost = this.expectedSeq !== null && rtp.seq !== this.expectedSeq;
    this.expectedSeq = (rtp.seq + 1) & 0xffff;
    const vp8 = vp8Payload(rtp.payload);
    if (!vp8) return [];
    if (vp8.startOfFrame || rtp.timestamp !== this.frameTimestamp) {
      // A new frame: what was gathered of an unfinished one (its marker lost) is not a frame.
      if (this.parts.length) this.drop();
      this.parts = [];
      this.frameTimestamp = rtp.timestamp;
      this.broken = !vp8.startOfFrame;
    } else if (lost) {
      this.broken = true;
    }
    if (lost) this.waitingForKeyframe = true;
    this.parts.push(vp8.data);
    return rtp.marker ? this.complete(rtp.timestamp) : [];
  }

  private complete(timestamp: number): Buffer[] {
    const frame = Buffer.concat(this.parts);
    this.parts = [];
    if (this.broken || frame.length < 3) return this.drop();
    const keyframe = (frame[0]! & 0x01) === 0;
    if (this.waitingForKeyframe && !keyframe) return this.drop();
    const out: Buffer[] = [];
    if (keyframe) {
      this.waitingForKeyframe = false;
      if (!this.headerWritten) {
        const size = keyframeSize(frame);
        if (!size) return this.drop();
        out.push(ivfHeader(size.width, size.height));
        this.headerWritten = true;
        this.lastTimestamp = timestamp;
        this.firstKeyframeAt = Date.now();
      }
    }
    this.elapsed += (timestamp - this.lastTimestamp) >>> 0;
    this.lastTimestamp = timestamp;
    const header = Buffer.alloc(12);
    header.writeUInt32LE(frame.length, 0);
    header.writeBigUInt64LE(BigInt(this.elapsed), 4);
    out.push(header, frame);
    this.framesWritten += 1;
    return out;
  }

  private drop(): [] {
    this.parts = [];
    this.framesDropped += 1;
    return [];
  }
}

interface RtpPacket {
  payloadType: number;
  marker: boolean;
  seq: number;
  timestamp: number;
  payload: Buffer;
}

/** The fixed header, CSRCs, extension and padding of an RTP packet (RFC 3550) taken off; null if it is not one. */
export function parseRtp(packet: Buffer): RtpPacket | null {
  if (packet.length < 12 || packet[0]! >> 6 !== 2) return null;
  let offset = 12 + (packet[0]! & 0x0f) * 4;
  if (packet[0]! & 0x10) {
    if (packet.length < offset + 4) return null;
    offset += 4 + packet.readUInt16BE(offset + 2) * 4;
  }
  const padding = packet[0]! & 0x20 ? packet[packet.length - 1]! : 0;
  if (offset > packet.length - padding) return null;
  return {
    payloadType: packet[1]! & 0x7f,
    marker: (packet[1]! & 0x80) !== 0,
    seq: packet.readUInt16BE(2),
    timestamp: packet.readUInt32BE(4),
    payload: packet.subarray(offset, packet.length - padding),
  };
}

/** The VP8 payload descriptor (RFC 7741, 4.2) taken off: whether the packet starts a frame, and its data. */
export function vp8Payload(payload: Buffer): { startOfFrame: boolean; data: Buffer } | null {
  if (payload.length < 1) return null;
  const first = payload[0]!;
  let offset = 1;
  if (first & 0x80) {
    const extension = payload[1] ?? 0;
    offset = 2;
    if (extension & 0x80) offset += (payload[offset] ?? 0) & 0x80 ? 2 : 1; // PictureID, 7 or 15 bits
    if (extension & 0x40) offset += 1; // TL0PICIDX
    if (extension & 0x30) offset += 1; // TID / KEYIDX
  }
  if (offset >= payload.length) return null;
  return { startOfFrame: (first & 0x10) !== 0 && (first & 0x07) === 0, data: payload.subarray(offset) };
}

/** Width and height from a VP8 keyframe's header (RFC 6386, 9.1), after its start code. */
export function keyframeSize(frame: Buffer): { width: number; height: number } | null {
  if (frame.length < 10 || frame[3] !== 0x9d || frame[4] !== 0x01 || frame[5] !== 0x2a) return null;
  return { width: frame.readUInt16LE(6) & 0x3fff, height: frame.readUInt16LE(8) & 0x3fff };
}

/** The 32-byte IVF file header: VP8, timestamps in 1/90000 s (RTP's video clock). */
function ivfHeader(width: number, height: number): Buffer {
  const header = Buffer.alloc(32);
  header.write('DKIF', 0, 'ascii');
  header.writeUInt16LE(0, 4);
  header.writeUInt16LE(32, 6);
  header.write('VP80', 8, 'ascii');
  header.writeUInt16LE(width, 12);
  header.writeUInt16LE(height, 14);
  header.writeUInt32LE(90_000, 16);
  header.writeUInt32LE(1, 20);
  return header;
}
