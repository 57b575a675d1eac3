import { describe, expect, it } from 'vitest';
import { keyframeSize, parseRtp, Vp8ToIvf, vp8Payload } from './vp8-ivf.js';

/** An RTP packet as Janus forwards it: version 2, the payload type, marker, sequence and timestamp, a VP8 descriptor. */
function packet(o: {
  seq: number;
  ts: number;
  start: boolean;
  marker: boolean;
  data: Buffer;
  pt?: number;
  ext?: boolean;
}) {
  const header = Buffer.alloc(12);
  header[0] = 0x80 | (o.ext ? 0x10 : 0);
  header[1] = (o.marker ? 0x80 : 0) | (o.pt ?? 96);
  header.writeUInt16BE(o.seq & 0xffff, 2);
  header.writeUInt32BE(o.ts >>> 0, 4);
  header.writeUInt32BE(0x1234, 8);
  // A one-word header extension (as browsers add for their RTP header extensions), then the descriptor:
  // X=1, S, PID 0; I=1 with a 15-bit PictureID.
  const extension = o.ext ? Buffer.from([0xbe, 0xde, 0, 1, 0x10, 0xff, 0, 0]) : Buffer.alloc(0);
  const descriptor = Buffer.from([0x80 | (o.start ? 0x10 : 0), 0x80, 0x81, 0x23]);
  return Buffer.concat([header, extension, descriptor, o.data]);
}

/** A VP8 keyframe's first bytes (frame tag with P=0, start code, 640x480) and filler. */
const keyframe = Buffer.concat([
  Buffer.from([0x50, 0x01, 0x00, 0x9d, 0x01, 0x2a, 0x80, 0x02, 0xe0, 0x01]),
  Buffer.alloc(30, 7),
]);
/** An interframe (P=1). */
const interframe = Buffer.concat([Buffer.from([0x31, 0x02, 0x00]), Buffer.alloc(20, 9)]);

/** One frame cut into two packets. */
const frame = (seq: number, ts: number, data: Buffer, ext = false) => [
  packet({ seq, ts, start: true, marker: false, data: data.subarray(0, 12), ext }),
  packet({ seq: seq + 1, ts, start: false, marker: true, data: data.subarray(12), ext }),
];

const written = (ivf: Vp8ToIvf, packets: Buffer[]) => Buffer.concat(packets.flatMap((p) => ivf.push(p)));

describe('VP8 RTP to IVF', () => {
  it('writes the header from the first keyframe, then each whole frame with its RTP time since the first', () => {
    const ivf = new Vp8ToIvf(96);
    const out = written(ivf, [...frame(10, 1000, keyframe, true), ...frame(12, 1000 + 3000, interframe)]);
    expect(out.subarray(0, 4).toString()).toBe('DKIF');
    expect(out.subarray(8, 12).toString()).toBe('VP80');
    expect([out.readUInt16LE(12), out.readUInt16LE(14), out.readUInt32LE(16)]).toEqual([640, 480, 90_000]);
    expect(out.readUInt32LE(32)).toBe(keyframe.length);
    expect(out.readBigUInt64LE(36)).toBe(0n);
    expect(out.subarray(44, 44 + keyframe.length).equals(keyframe)).toBe(true);
    const second = 44 + keyframe.length;
    expect(out.readUInt32LE(second)).toBe(interframe.length);
    expect(out.readBigUInt64LE(second + 4)).toBe(3000n);
    expect(ivf.framesWritten).toBe(2);
    expect(ivf.firstKeyframeAt).not.toBeNull();
  });

  it('drops what comes before the first keyframe, and the other payload types', () => {
    const ivf = new Vp8ToIvf(96);
    expect(written(ivf, frame(1, 0, interframe)).length).toBe(0);
    expect(ivf.firstPacketAt).not.toBeNull();
    expect(ivf.firstKeyframeAt).toBeNull();
    expect(written(ivf, [packet({ seq: 3, ts: 5, start: true, marker: true, data: keyframe, pt: 111 })]).length).toBe(
      0,
    );
    expect(
      written(ivf, frame(3, 3000, keyframe))
        .subarray(0, 4)
        .toString(),
    ).toBe('DKIF');
    expect(ivf.framesDropped).toBe(1);
  });

  it('after a lost packet, drops the broken frame and the frames after it until the next keyframe', () => {
    const ivf = new Vp8ToIvf(96);
    written(ivf, frame(0, 0, keyframe));
    const [first] = frame(2, 3000, interframe); // its second packet (seq 3) lost
    const lostTail = written(ivf, [first!, ...frame(4, 6000, interframe)]);
    expect(lostTail.length).toBe(0);
    const next = written(ivf, frame(6, 9000, keyframe));
    expect(next.readUInt32LE(0)).toBe(keyframe.length);
    expect(next.readBigUInt64LE(4)).toBe(9000n);
    expect(ivf.framesWritten).toBe(2);
  });

  it('counts time across the wrap of the 32-bit RTP timestamp and the 16-bit sequence', () => {
    const ivf = new Vp8ToIvf(96);
    written(ivf, frame(0xffff, 0xffffffff - 1499, keyframe));
    const out = written(ivf, frame(1, 1500, interframe));
    expect(out.readBigUInt64LE(4)).toBe(3000n);
  });

  it('reads RTP padding and the descriptor with a short PictureID, and refuses what is not RTP', () => {
    const padded = Buffer.concat([
      packet({ seq: 1, ts: 1, start: true, marker: true, data: keyframe }),
      Buffer.from([0, 0, 3]),
    ]);
    padded[0] = padded[0]! | 0x20;
    expect(parseRtp(padded)!.payload.length).toBe(4 + keyframe.length);
    expect(vp8Payload(Buffer.from([0x90, 0x80, 0x05, 0xaa]))).toEqual({
      startOfFrame: true,
      data: Buffer.from([0xaa]),
    });
    expect(vp8Payload(Buffer.from([0x11, 0xaa]))!.startOfFrame).toBe(false); // partition 1: not a frame's start
    expect(parseRtp(Buffer.from('not an RTP packet at all'))).toBeNull();
    expect(keyframeSize(interframe)).toBeNull();
  });
});
