import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import jpeg from 'jpeg-js';
import { PCM_CHUNK_MS, PCM_RATE, RtpVideoDecoder, rateCap } from './rtp-decoder.js';
import { detectVoice } from '../../biometrics/voice/vad.js';
import { JpegSplitter } from './jpeg-splitter.js';

/** Send `seconds` of a VP8 test pattern as RTP to the port, as Janus's forwarder would (real ffmpeg both ends). */
function sendVp8(port: number, seconds: number, size = '320x240', rate = 15) {
  return spawn(
    'ffmpeg',
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-re',
      '-f',
      'lavfi',
      '-i',
      `testsrc=size=${size}:rate=${rate}`,
      '-t',
      String(seconds),
      '-c:v',
      'libvpx',
      '-deadline',
      'realtime',
      '-g',
      '15',
      '-payload_type',
      '96',
      '-f',
      'rtp',
      `rtp://127.0.0.1:${port}`,
    ],
    { stdio: 'ignore' },
  );
}

/** Send the first 6 s of a recording as Opus RTP (48 kHz, as browsers send it) to the port, in real time. */
function sendOpus(port: number, wavPath: string) {
  return spawn(
    'ffmpeg',
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-re',
      '-i',
      wavPath,
      '-t',
      '6',
      '-ar',
      '48000',
      '-c:a',
      'libopus',
      '-payload_type',
      '111',
      '-f',
      'rtp',
      `rtp://127.0.0.1:${port}`,
    ],
    { stdio: 'ignore' },
  );
}

describe('RTP video decoder', () => {
  it('decodes forwarded VP8 into JPEG frames sampled at the asked rate, from the first packet sent, then ends', async () => {
    let ended = false;
    const decoder = new RtpVideoDecoder(
      { codec: 'VP8', payloadType: 96, framesPerSecond: 4, maxSeconds: 15 },
      () => (ended = true),
    );
    await decoder.start();
    // The port is held from here: the stream's first keyframe is kept while ffmpeg starts.
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
    // The sender's first packet began a keyframe, and it was decoded: no frame dropped waiting for one.
    const { firstPacketAt, firstKeyframeAt, framesDropped } = decoder.stages;
    expect(firstKeyframeAt).toBeGreaterThanOrEqual(firstPacketAt!);
    expect(framesDropped).toBe(0);
  }, 30_000);

  it('hands over each frame of a camera slower than the asked rate once, none repeated to make up the rate', async () => {
    // A browser asked for the session's rate may send fewer frames (its encoder short of CPU): ffmpeg's fps filter
    // repeated frames to fill the rate (here 2 of every 5), which the capture would analyse twice.
    const decoder = new RtpVideoDecoder(
      { codec: 'VP8', payloadType: 96, framesPerSecond: 5, maxSeconds: 15 },
      () => {},
    );
    await decoder.start();
    const sender = sendVp8(decoder.port, 6, '320x240', 3);
    const frames: string[] = [];
    for (let frame = await decoder.next(); frame && frames.length < 8; frame = await decoder.next())
      frames.push(createHash('sha1').update(frame).digest('hex'));
    decoder.stop();
    sender.kill();
    expect(frames.length).toBe(8);
    expect(new Set(frames).size).toBe(8);
  }, 30_000);

  it('caps the frames at the asked rate by their timestamps, and passes a slower or uneven camera whole', async () => {
    const run = promisify(execFile);
    // Frames handed over from `seconds` of a test pattern at `rate` fps (every frame distinct), through the
    // decoder's own filter and output timing; its IVF input counts in the RTP clock's 90 kHz.
    const handedOver = async (rate: number, framesPerSecond: number, setpts = 'PTS') => {
      const { stdout } = await run('ffmpeg', [
        ...['-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc=size=64x48:rate=${rate}`, '-t', '4'],
        ...['-vf', `settb=1/90000,setpts=${setpts},${rateCap(framesPerSecond)}`],
        ...['-vsync', 'passthrough', '-f', 'framemd5', '-'],
      ]);
      const hashes = stdout
        .split('\n')
        .filter((l) => /^0,/.test(l))
        .map((l) => l.split(',').at(-1)!.trim());
      return { frames: hashes.length, distinct: new Set(hashes).size };
    };
    // 15 or 30 fps for 4 s at 5: 20 frames and the bucket's one spare at the start.
    expect(await handedOver(15, 5)).toEqual({ frames: 21, distinct: 21 });
    expect(await handedOver(30, 5)).toEqual({ frames: 21, distinct: 21 });
    // 5 fps whose frames come 30 ms early and late in turn (a 30 fps camera's spacing): all 20, once each.
    expect(await handedOver(5, 5, "'PTS+if(mod(N,2),-0.03,0.03)/TB'")).toEqual({ frames: 20, distinct: 20 });
    expect(await handedOver(3, 5)).toEqual({ frames: 12, distinct: 12 });
  }, 60_000);

  it('hands a camera bigger than 640 px over scaled down to 640 on its longer side, the aspect kept', async () => {
    const decoder = new RtpVideoDecoder(
      { codec: 'VP8', payloadType: 96, framesPerSecond: 5, maxSeconds: 15 },
      () => {},
    );
    await decoder.start();
    const sender = sendVp8(decoder.port, 5, '1280x720');
    const frame = await decoder.next();
    decoder.stop();
    sender.kill();
    const image = jpeg.decode(frame!);
    expect([image.width, image.height]).toEqual([640, 360]);
  }, 30_000);

  it('cuts concatenated JPEGs at their end markers, across chunk borders', () => {
    const one = Buffer.from(jpeg.encode({ width: 8, height: 8, data: Buffer.alloc(8 * 8 * 4, 200) }, 90).data);
    const two = Buffer.from(jpeg.encode({ width: 4, height: 4, data: Buffer.alloc(4 * 4 * 4, 10) }, 90).data);
    const stream = Buffer.concat([one, two, one]);
    const splitter = new JpegSplitter();
    const out = [
      ...splitter.push(stream.subarray(0, 7)),
      ...splitter.push(stream.subarray(7, one.length + 3)),
      ...splitter.push(stream.subarray(one.length + 3)),
    ];
    expect(out.map((b) => b.length)).toEqual([one.length, two.length, one.length]);
    expect(out[1]!.equals(two)).toBe(true);
  });

  it('decodes forwarded Opus into 16 kHz mono PCM in 100 ms chunks that hold the speech', async () => {
    const recording = new URL(
      '../../../test/fixtures/speech/asterisk-en_US_f_Allison/demo-instruct.wav',
      import.meta.url,
    ).pathname;
    const decoder = new RtpVideoDecoder(
      { codec: 'OPUS', payloadType: 111, framesPerSecond: 5, maxSeconds: 30 },
      () => {},
    );
    await decoder.start();
    const sender = sendOpus(decoder.port, recording);
    sender.once('exit', () => setTimeout(() => decoder.stop(), 500));
    const chunks: Buffer[] = [];
    for (let chunk = await decoder.next(); chunk; chunk = await decoder.next()) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(20);
    expect(new Set(chunks.map((c) => c.length))).toEqual(new Set([(PCM_RATE * 2 * PCM_CHUNK_MS) / 1000]));
    const pcm = Buffer.concat(chunks);
    const samples = new Float32Array(pcm.length / 2);
    for (let i = 0; i < samples.length; i++) samples[i] = pcm.readInt16LE(i * 2) / 32768;
    const vad = detectVoice(samples, PCM_RATE);
    const voicedSeconds = (vad.mask.reduce((n, f) => n + f, 0) * vad.window) / PCM_RATE;
    expect(voicedSeconds).toBeGreaterThan(2);
  }, 60_000);
});
