import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import jpeg from 'jpeg-js';
import { RtpVideoDecoder } from './rtp-decoder.js';
import { JpegSplitter } from './jpeg-splitter.js';

/** Send `seconds` of a VP8 test pattern as RTP to the port, as Janus's forwarder would (real ffmpeg both ends). */
function sendVp8(port: number, seconds: number) {
  return spawn('ffmpeg', [
    '-hide_banner', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=15', '-t', String(seconds),
    '-c:v', 'libvpx', '-deadline', 'realtime', '-g', '15', '-payload_type', '96', '-f', 'rtp', `rtp://127.0.0.1:${port}`,
  ], { stdio: 'ignore' });
}

describe('RTP video decoder', () => {
  it('decodes forwarded VP8 into JPEG frames sampled at the asked rate, then ends', async () => {
    let ended = false;
    const decoder = new RtpVideoDecoder({ codec: 'VP8', payloadType: 96, framesPerSecond: 4, maxSeconds: 15 }, () => (ended = true));
    await decoder.start();
    expect(decoder.port % 2).toBe(0);
    const sender = sendVp8(decoder.port, 5);
    const frames: Buffer[] = [];
    const reading = (async () => {
      for (let frame = await decoder.next(); frame; frame = await decoder.next()) {
        frames.push(frame);
        if (frames.length === 4) decoder.stop();
      }
    })();
    await reading;
    sender.kill();
    expect(ended).toBe(true);
    expect(frames.length).toBe(4);
    const image = jpeg.decode(frames[0]!);
    expect([image.width, image.height]).toEqual([320, 240]);
  }, 30_000);

  it('cuts concatenated JPEGs at their end markers, across chunk borders', () => {
    const one = Buffer.from(jpeg.encode({ width: 8, height: 8, data: Buffer.alloc(8 * 8 * 4, 200) }, 90).data);
    const two = Buffer.from(jpeg.encode({ width: 4, height: 4, data: Buffer.alloc(4 * 4 * 4, 10) }, 90).data);
    const stream = Buffer.concat([one, two, one]);
    const splitter = new JpegSplitter();
    const out = [...splitter.push(stream.subarray(0, 7)), ...splitter.push(stream.subarray(7, one.length + 3)), ...splitter.push(stream.subarray(one.length + 3))];
    expect(out.map((b) => b.length)).toEqual([one.length, two.length, one.length]);
    expect(out[1]!.equals(two)).toBe(true);
  });
});
