import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JpegSplitter } from './jpeg-splitter.js';
import { freeRtpPort } from './rtp-ports.js';
import { Vp8ToIvf } from './vp8-ivf.js';

/**
 * What a decoder receives: one RTP stream, as Janus forwards it. Video (VP8, H264) comes out as JPEG frames
 * sampled `framesPerSecond` times a second; audio (OPUS) as 16 kHz mono signed 16-bit PCM, in chunks of
 * {@link PCM_CHUNK_MS}, the voice pipeline's own rate.
 */
interface VideoDecoderSpec {
  codec: 'VP8' | 'H264' | 'OPUS';
  /** The payload type the forwarded packets carry (Janus keeps the publisher's). */
  payloadType: number;
  framesPerSecond: number;
  /** The decoder ends by itself after this long, whatever its reader does. */
  maxSeconds: number;
}

/** The session description ffmpeg reads: where the RTP arrives and how to depacketise it. */
function sdpFor(spec: VideoDecoderSpec, port: number): string {
  const media =
    spec.codec === 'OPUS'
      ? [`m=audio ${port} RTP/AVP ${spec.payloadType}`, `a=rtpmap:${spec.payloadType} opus/48000/2`]
      : [`m=video ${port} RTP/AVP ${spec.payloadType}`, `a=rtpmap:${spec.payloadType} ${spec.codec}/90000`];
  return [
    'v=0',
    'o=- 0 0 IN IP4 127.0.0.1',
    's=BIMS capture',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    ...media,
    ...(spec.codec === 'H264' ? [`a=fmtp:${spec.payloadType} packetization-mode=1`] : []),
    'a=recvonly',
    '',
  ].join('\r\n');
}

type Listener = (frame: Buffer | null) => void;

/**
 * The longer side of the frames handed over, at most: a camera's 720p or 1080p is scaled down to it (smaller
 * pictures are left as they are). The detector sees 320x240 whatever it gets; the landmark and embedding crops
 * and the quality gate's eye distance are taken from the frame itself, and at 640 a face at arm's length keeps
 * well over the 21 px between the eyes the gate asks for (docs/extraction.md). Bigger frames only cost more:
 * ffmpeg's JPEG encoding, the transfer, and the pool's JPEG decoding of every frame.
 */
const MAX_FRAME_SIDE = 640;
const SCALE_DOWN =
  `scale=w='if(gte(iw,ih),min(${MAX_FRAME_SIDE},iw),-2)':h='if(gte(iw,ih),-2,min(${MAX_FRAME_SIDE},ih))'` +
  ':flags=bilinear';

/**
 * The frames handed over: every decoded frame, but none sooner than the rate allows (`framesPerSecond`, a token
 * bucket of two frames: the long-run rate is at most the asked one, and a frame a little early after a late one
 * still passes). Why not ffmpeg's `fps` filter: it makes a constant rate out of any input, so a camera that sends
 * at about the asked rate (the SDK asks the browser for just that, `maxFramerate`) had frames duplicated and
 * others dropped by the jitter of their timestamps (a 5 fps clip with a 30 fps camera's spacing: 100 frames in,
 * 100 out, 5 of them repeats of the one before; with an encoder short of CPU, 3.7 fps in, 5 out, a quarter
 * repeats), and a repeated frame is analysed again and counted twice in passive liveness's average. A slower
 * sender's frames all pass, once each. The output must then be `-vsync passthrough`: image2pipe's default is a
 * constant rate, which would make the repeats itself (`-vsync`, not `-fps_mode`: ffmpeg 4.4 has only the first).
 * The expression's variables: 0 the tokens, 1 the last frame's time, 2 a frame seen, 3 this one passes.
 */
export function rateCap(framesPerSecond: number): string {
  const tokens = `if(ld(2),min(2,ld(0)+(t-ld(1))*${framesPerSecond}),2)`;
  return `select='st(0,${tokens});st(1,t);st(2,1);st(3,gte(ld(0),1));st(0,ld(0)-ld(3));ld(3)'`;
}

/** Decoded audio: 16 kHz mono, as the voice pipeline analyses it, handed over 100 ms at a time. */
export const PCM_RATE = 16_000;
export const PCM_CHUNK_MS = 100;

/** Cuts a byte stream into chunks of one size (PCM: whole samples, so never half of one). */
class PcmChunker {
  private pending: Buffer = Buffer.alloc(0);
  constructor(private readonly size: number) {}
  push(chunk: Buffer): Buffer[] {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const out: Buffer[] = [];
    while (this.pending.length >= this.size) {
      out.push(this.pending.subarray(0, this.size));
      this.pending = this.pending.subarray(this.size);
    }
    return out;
  }
}

/**
 * One ffmpeg process receiving forwarded RTP on a loopback UDP port, decoding the video and writing JPEG
 * frames sampled at `framesPerSecond` to its stdout (or the audio as PCM), which is cut into frames for the
 * one reader. Video frames that arrive while nobody reads are kept (a few only: the newest win), so the
 * reader sees the live picture; audio chunks are all kept (up to a minute).
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
  /** VP8: the sidecar's own socket on the port, and the frames it reassembles for ffmpeg (vp8-ivf.ts). */
  private socket: Socket | null = null;
  private vp8: Vp8ToIvf | null = null;

  constructor(
    readonly spec: VideoDecoderSpec,
    private readonly onEnd: (decoder: RtpVideoDecoder) => void,
    private readonly ffmpeg = 'ffmpeg',
  ) {}

  /**
   * Ready to receive once this resolves: for VP8 the port is already bound (packets sent from now on are
   * kept while ffmpeg starts); OPUS and H264 are ffmpeg's to receive, and it binds the port a moment later.
   */
  async start(): Promise<void> {
    const audio = this.spec.codec === 'OPUS';
    const input = this.spec.codec === 'VP8' ? await this.receiveVp8() : await this.receiveWithFfmpeg();
    const output = audio
      ? ['-vn', '-ac', '1', '-ar', String(PCM_RATE), '-f', 's16le', 'pipe:1']
      : [
          '-an',
          '-vf',
          `${rateCap(this.spec.framesPerSecond)},${SCALE_DOWN}`,
          '-vsync',
          'passthrough',
          '-f',
          'image2pipe',
          '-c:v',
          'mjpeg',
          '-pix_fmt',
          'yuvj420p',
          '-q:v',
          '2',
          'pipe:1',
        ];
    // One thread each way: a decoder's frame threads hold back each frame until the next ones arrive (the first
    // picture came 2 frames later with the default on 2 cores), and many sessions share the cores anyway.
    const args = ['-hide_banner', '-loglevel', 'error', '-threads', '1', ...input, '-threads', '1', ...output];
    const child = spawn(this.ffmpeg, args, { stdio: [this.vp8 ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    this.child = child;
    if (this.vp8) {
      const vp8 = this.vp8;
      child.stdin!.on('error', () => {}); // ffmpeg gone: 'close' below ends the decoder
      this.socket!.on('message', (packet) => {
        for (const bytes of vp8.push(packet)) child.stdin!.write(bytes);
      });
    }
    const splitter = audio ? new PcmChunker((PCM_RATE * 2 * PCM_CHUNK_MS) / 1000) : new JpegSplitter();
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

  /** VP8 from our own socket, written to ffmpeg as IVF: no stream to probe, nothing lost while ffmpeg starts. */
  private async receiveVp8(): Promise<string[]> {
    this.vp8 = new Vp8ToIvf(this.spec.payloadType);
    const socket = createSocket('udp4');
    this.socket = socket;
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, '127.0.0.1', () => resolve());
    });
    socket.on('error', () => this.stop());
    this.port = socket.address().port;
    return ['-nostdin', '-probesize', '32', '-analyzeduration', '0', '-f', 'ivf', '-i', 'pipe:0'];
  }

  /** ffmpeg receives the RTP itself, described by an SDP file. */
  private async receiveWithFfmpeg(): Promise<string[]> {
    this.port = await freeRtpPort();
    this.dir = await mkdtemp(join(tmpdir(), 'bims-decoder-'));
    const sdp = join(this.dir, 'stream.sdp');
    await writeFile(sdp, sdpFor(this.spec, this.port), { mode: 0o600 });
    return ['-nostdin', '-protocol_whitelist', 'file,udp,rtp', '-analyzeduration', '1000000', '-i', sdp];
  }

  /**
   * VP8: when (Date.now()) the first RTP packet and the first keyframe arrived (null: not yet, or another
   * codec), and the frames dropped because they could not be decoded (before a keyframe, or broken by a loss).
   */
  get stages(): { firstPacketAt: number | null; firstKeyframeAt: number | null; framesDropped: number } {
    return {
      firstPacketAt: this.vp8?.firstPacketAt ?? null,
      firstKeyframeAt: this.vp8?.firstKeyframeAt ?? null,
      framesDropped: this.vp8?.framesDropped ?? 0,
    };
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
    // Video: the newest pictures win. Audio: every chunk is speech the session needs, up to a minute behind.
    if (this.queue.length > (this.spec.codec === 'OPUS' ? 600 : 4)) this.queue.shift();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.deadline) clearTimeout(this.deadline);
    if (this.child && this.child.exitCode === null) this.child.kill('SIGKILL');
    this.socket?.close();
    if (this.dir) void rm(this.dir, { recursive: true, force: true });
    this.listener?.(null);
    this.onEnd(this);
  }
}
