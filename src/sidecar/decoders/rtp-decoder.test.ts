import { execFileSync, spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { MAX_QUEUED_FRAMES, PCM_CHUNK_MS, PCM_RATE, RtpVideoDecoder } from './rtp-decoder.js';
import { detectVoice } from '../../biometrics/voice/vad.js';
import { PpmSplitter } from './ppm-splitter.js';
import { ppmHeader, readPpmFrame } from '../../protocols/ppm-frames.js';

/** Send `seconds` of a VP8 test pattern as RTP to the port, as Janus's forwarder would (real ffmpeg both ends). */
function sendVp8(port: number, seconds: number, size = '320x240') {
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
      `testsrc=size=${size}:rate=15`,
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
  it('decodes forwarded VP8 into raw rgb24 frames (PPM) sampled at the asked rate, from the first packet sent, then ends', async () => {
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
    // Each frame is its header and exactly 320x240x3 bytes of pixels, nothing between frames lost or joined.
    const image = readPpmFrame(frames[0]!);
    expect([image.width, image.height, image.data.length]).toEqual([320, 240, 320 * 240 * 3]);
    // The pixels are the picture's rgb: within VP8's loss of testsrc's first frame as ffmpeg makes it in rgb24
    // (its colour bars change only in the small counter), where a misread layout would be tens of levels away.
    const reference = execFileSync('ffmpeg', [
      ...['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=15'],
      ...['-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    ]);
    let diff = 0;
    for (let i = 0; i < reference.length; i++) diff += Math.abs(reference[i]! - image.data[i]!);
    expect(diff / reference.length).toBeLessThan(12);
    // The sender's first packet began a keyframe, and it was decoded: no frame dropped waiting for one.
    const { firstPacketAt, firstKeyframeAt, framesDropped } = decoder.stages;
    expect(firstKeyframeAt).toBeGreaterThanOrEqual(firstPacketAt!);
    expect(framesDropped).toBe(0);
  }, 30_000);

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
    const image = readPpmFrame(frame!);
    expect([image.width, image.height]).toEqual([640, 360]);
  }, 30_000);

  it('cuts a stream of PPM frames of changing sizes into whole frames, across chunk borders, one copy each', () => {
    const ppm = (width: number, height: number, fill: number) =>
      Buffer.concat([Buffer.from(`P6\n${width} ${height}\n255\n`), Buffer.alloc(width * height * 3, fill)]);
    const one = ppm(8, 6, 200);
    const two = ppm(4, 4, 10);
    const stream = Buffer.concat([one, two, one]);
    // Cut inside the first header, inside the pixels, and inside the second header.
    const cuts = [0, 5, one.length - 7, one.length + 3, one.length + 40, stream.length];
    const splitter = new PpmSplitter();
    const out = cuts.slice(1).flatMap((end, i) => splitter.push(stream.subarray(cuts[i], end)));
    expect(out.map((b) => b.length)).toEqual([one.length, two.length, one.length]);
    expect(out[1]!.equals(two)).toBe(true);
    expect(readPpmFrame(out[2]!)).toMatchObject({ width: 8, height: 6 });
    // Anything but ffmpeg's P6 is refused, not read as pixels.
    expect(() => new PpmSplitter().push(Buffer.from('P5\n8 6\n255\n'))).toThrow(/P6/);
    expect(() => ppmHeader(Buffer.from('P6\n8 6\n65535\n'))).toThrow(/malformed/);
    expect(() => readPpmFrame(one.subarray(0, one.length - 1))).toThrow(/8x6/);
  });

  it('keeps only the newest few raw frames of a reader that does not read', async () => {
    const decoder = new RtpVideoDecoder(
      { codec: 'VP8', payloadType: 96, framesPerSecond: 10, maxSeconds: 15 },
      () => {},
    );
    await decoder.start();
    const sender = sendVp8(decoder.port, 5, '640x480');
    // Nobody reads for a while: frames keep coming, and the queue holds the newest MAX_QUEUED_FRAMES only.
    while (decoder.framesOut < MAX_QUEUED_FRAMES + 6) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(decoder.queued).toBe(MAX_QUEUED_FRAMES);
    const newest = await decoder.next();
    decoder.stop();
    sender.kill();
    expect(readPpmFrame(newest!).data.length).toBe(640 * 480 * 3);
  }, 30_000);

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
