import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JpegSplitter } from './jpeg-splitter.js';
import { freeRtpPort } from './rtp-ports.js';

/** What a decoder receives: one RTP video stream, as Janus forwards it, and how often to sample it. */
export interface VideoDecoderSpec {
  codec: 'VP8' | 'H264';
  /** The payload type the forwarded packets carry (Janus keeps the publisher's). */
  payloadType: number;
  framesPerSecond: number;
  /** The decoder ends by itself after this long, whatever its reader does. */
  maxSeconds: number;
}

/** The session description ffmpeg reads: where the RTP arrives and how to depacketise it. */
export function sdpFor(spec: VideoDecoderSpec, port: number): string {
  return [
    'v=0',
    'o=- 0 0 IN IP4 127.0.0.1',
    's=BIMS capture',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    `m=video ${port} RTP/AVP ${spec.payloadType}`,
    `a=rtpmap:${spec.payloadType} ${spec.codec}/90000`,
    ...(spec.codec === 'H264' ? [`a=fmtp:${spec.payloadType} packetization-mode=1`] : []),
    'a=recvonly',
    '',
  ].join('\r\n');
}

type Listener = (frame: Buffer | null) => void;

/**
 * One ffmpeg process receiving forwarded RTP on a loopback UDP port, decoding the video and writing JPEG
 * frames sampled at `framesPerSecond` to its stdout, which is cut into frames for the one reader. Frames
 * that arrive while nobody reads are kept (a few only: the newest win), so the reader sees the live picture.
 */
export class RtpVideoDecoder {
  readonly id = crypto.randomUUID();
  port = 0;
  framesOut = 0;
  private child: ChildProcess | null = null;
  private dir: string | null = null;
  private readonly queue: Buffer[] = [];
  private listener: Listener | null = null;
  private ended = false;
  private stderr = '';
  private deadline: ReturnType<typeof setTimeout> | null = null;

  constructor(readonly spec: VideoDecoderSpec, private readonly onEnd: (decoder: RtpVideoDecoder) => void, private readonly ffmpeg = 'ffmpeg') {}

  async start(): Promise<void> {
    this.port = await freeRtpPort();
    this.dir = await mkdtemp(join(tmpdir(), 'bims-decoder-'));
    const sdp = join(this.dir, 'stream.sdp');
    await writeFile(sdp, sdpFor(this.spec, this.port), { mode: 0o600 });
    const args = [
      '-hide_banner', '-loglevel', 'error', '-nostdin',
      '-protocol_whitelist', 'file,udp,rtp',
      '-analyzeduration', '1000000',
      '-i', sdp,
      '-an', '-vf', `fps=${this.spec.framesPerSecond}`,
      '-f', 'image2pipe', '-c:v', 'mjpeg', '-pix_fmt', 'yuvj420p', '-q:v', '2', 'pipe:1',
    ];
    const child = spawn(this.ffmpeg, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const splitter = new JpegSplitter();
    child.stdout!.on('data', (chunk: Buffer) => {
      for (const frame of splitter.push(chunk)) this.deliver(frame);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-2000);
    });
    // 'close', not 'exit': every frame written to stdout has been read by then.
    child.once('close', () => this.finish());
    child.once('error', (error) => {
      this.stderr += `\n${error.message}`;
      this.finish();
    });
    this.deadline = setTimeout(() => this.stop(), this.spec.maxSeconds * 1000);
    this.deadline.unref();
  }

  /** ffmpeg's last words, for the sidecar's log when a decoder ends without frames. */
  get diagnostics(): string {
    return this.stderr.trim();
  }

  /** Wait for the next frame; null once the decoder has ended and every frame was read. */
  next(): Promise<Buffer | null> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.listener = (frame) => {
        this.listener = null;
        resolve(frame);
      };
    });
  }

  stop(): void {
    if (this.child && this.child.exitCode === null) this.child.kill('SIGKILL');
    this.finish();
  }

  private deliver(frame: Buffer): void {
    this.framesOut += 1;
    if (this.listener) return this.listener(frame);
    this.queue.push(frame);
    if (this.queue.length > 4) this.queue.shift();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.deadline) clearTimeout(this.deadline);
    if (this.child && this.child.exitCode === null) this.child.kill('SIGKILL');
    if (this.dir) void rm(this.dir, { recursive: true, force: true });
    this.listener?.(null);
    this.onEnd(this);
  }
}
