// npm run bench -- capture-rtp [--sessions 1,2,4,8] [--seconds 15] [--fps 5] [--workers N]
// Biometric capture over a live stream, from RTP on: for each session a real ffmpeg sends a VP8 camera clip
// (a face photo, 640x480, 15 fps) as RTP to the sidecar's decoder (the same RtpVideoDecoder Janus forwards to),
// and a CaptureSession analyses the sampled frames in the extraction pool. WebRTC and Janus are left out: they
// relay the RTP untouched. Reported:
// - time to result: a VERIFY session from its first frame to the operation's outcome (and from the start);
// - sustained analysis: sessions that never finish (liveness threshold 100) for --seconds, N at once: frames
//   analysed per second per session and in total, and the fraction of the sampled frames analysed (the decoder
//   keeps the newest frames, so a session that falls behind skips frames rather than lagging).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/config.js';
import { boot } from '../src/runtime/bootstrap.js';
import { createLogger } from '../src/logger.js';
import { createExtractor } from '../src/extraction/index.js';
import { RtpVideoDecoder } from '../src/sidecar/decoders/rtp-decoder.js';
import { CaptureSession } from '../src/services/capture/capture-session.js';
import { type CaptureMedia, type CaptureParams } from '../src/services/capture/capture-types.js';
import { InitParams } from '../src/schemas/gateway-init.js';
import type { Principal } from '../src/services/auth/principal.js';

const PHOTO = fileURLToPath(new URL('../test/fixtures/photos/labelled/franck/franck_02159.jpg', import.meta.url));
const principal: Principal = { accountId: null, username: 'bench', role: 'ADMIN', via: 'basic' };

function option(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
}

/**
 * The camera's encoded stream, made once: the photo letterboxed to 640x480, 2 s of VP8 at 15 fps with a
 * keyframe a second. Senders replay it without re-encoding: encoding is the browser's work, not the service's.
 */
async function encodedClip(dir: string): Promise<string> {
  const out = join(dir, 'camera.webm');
  await promisify(execFile)('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-loop',
    '1',
    '-i',
    PHOTO,
    '-t',
    '2',
    '-vf',
    'scale=640:480:force_original_aspect_ratio=decrease,pad=640:480:(ow-iw)/2:(oh-ih)/2,format=yuv420p',
    '-r',
    '15',
    '-c:v',
    'libvpx',
    '-deadline',
    'good',
    '-b:v',
    '1M',
    '-g',
    '15',
    out,
  ]);
  return out;
}

/** A camera: the encoded clip looped in real time as RTP to the port, until killed. */
function camera(clip: string, port: number): ChildProcess {
  return spawn(
    'ffmpeg',
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-re',
      '-stream_loop',
      '-1',
      '-i',
      clip,
      '-c:v',
      'copy',
      '-payload_type',
      '96',
      '-f',
      'rtp',
      `rtp://127.0.0.1:${port}`,
    ],
    { stdio: 'ignore' },
  );
}

/** One session fed by its own camera through a decoder. */
async function session(booted: Awaited<ReturnType<typeof boot>>, clip: string, params: CaptureParams) {
  let decoder!: RtpVideoDecoder;
  let sender: ChildProcess | null = null;
  const media: CaptureMedia = {
    async *frames(signal) {
      decoder = new RtpVideoDecoder(
        {
          codec: 'VP8',
          payloadType: 96,
          framesPerSecond: params.framesPerSecond,
          maxSeconds: params.timeoutSeconds + 30,
        },
        () => {},
      );
      await decoder.start();
      sender = camera(clip, decoder.port);
      signal.addEventListener('abort', () => decoder.stop(), { once: true });
      for (let frame = await decoder.next(); frame; frame = await decoder.next()) yield frame;
    },
    async release() {
      decoder?.stop();
      sender?.kill('SIGKILL');
    },
  };
  const capture = new CaptureSession(booted.services, params, { principal, surface: 'admin' }, media);
  capture.start();
  await capture.finished;
  return capture;
}

export async function run(args: string[]) {
  const counts = option(args, 'sessions', '1,2,4,8').split(',').map(Number);
  const seconds = Number(option(args, 'seconds', '15'));
  const fps = Number(option(args, 'fps', '5'));
  const workers = Number(option(args, 'workers', String(availableParallelism())));
  const config = loadConfig({
    ...process.env,
    BIMS_LOG_LEVEL: 'silent',
    BIMS_ADMIN_PASSWORD: 'bench-password',
    BIMS_PASSWORD_ITERATIONS: '10000',
  });
  const booted = await boot({
    config,
    runtime: 'bench',
    hostname: 'bench',
    pgliteDir: 'memory://',
    logger: createLogger('silent'),
    createExtractor: () => createExtractor({ mode: 'worker-threads', size: workers }),
  });
  const dir = await mkdtemp(join(tmpdir(), 'bims-bench-capture-'));
  try {
    const clip = await encodedClip(dir);
    await booted.services.extractors.get();
    // Warm the pool (the optimising tier compiles while the first frames run), then enrol the subject to verify.
    await session(
      booted,
      clip,
      InitParams.parse({
        kind: 'FV',
        purpose: 'CHECK',
        framesPerSecond: fps,
        timeoutSeconds: 30,
        selectFrames: 1,
        livenessFrames: 10,
      }),
    );
    const enrolled = await session(
      booted,
      clip,
      InitParams.parse({
        kind: 'FV',
        purpose: 'ENROLL',
        subjectId: 'bench-franck',
        framesPerSecond: fps,
        timeoutSeconds: 30,
      }),
    );
    const verifies = [];
    for (let i = 0; i < 3; i++) {
      const v = await session(
        booted,
        clip,
        InitParams.parse({
          kind: 'FV',
          purpose: 'VERIFY',
          subjectId: 'bench-franck',
          framesPerSecond: fps,
          timeoutSeconds: 30,
        }),
      );
      verifies.push({
        status: v.result?.status,
        ...(v.result?.reason ? { reason: v.result.reason } : {}),
        firstFrameMs: Math.round(v.metrics.firstFrameMs ?? NaN),
        firstFrameToResultMs: Math.round((v.metrics.resultMs ?? NaN) - (v.metrics.firstFrameMs ?? NaN)),
        framesAnalysed: v.metrics.framesAnalysed,
      });
    }
    const sustained = [];
    for (const n of counts) {
      const params = InitParams.parse({
        kind: 'FV_ADVANCED',
        purpose: 'CHECK',
        framesPerSecond: fps,
        timeoutSeconds: seconds,
        overrides: { 'liveness.mode': 'PASSIVE', 'liveness.threshold': 100 },
      });
      const sessions = await Promise.all(Array.from({ length: n }, () => session(booted, clip, params)));
      const perSession = sessions.map((s) => {
        const activeSeconds = ((s.metrics.resultMs ?? 0) - (s.metrics.firstFrameMs ?? 0)) / 1000;
        return {
          analysedPerSecond: s.metrics.framesAnalysed / activeSeconds,
          msPerFrame: s.metrics.analyseMs / Math.max(1, s.metrics.framesAnalysed),
        };
      });
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const perSessionFps = mean(perSession.map((p) => p.analysedPerSecond));
      sustained.push({
        sessions: n,
        framesAnalysedPerSecondPerSession: Number(perSessionFps.toFixed(2)),
        framesAnalysedPerSecondTotal: Number((perSessionFps * n).toFixed(2)),
        fractionOfSampledFramesAnalysed: Number((perSessionFps / fps).toFixed(2)),
        meanAnalysisMsPerFrame: Math.round(mean(perSession.map((p) => p.msPerFrame))),
      });
    }
    return {
      host: { cpus: availableParallelism(), workers },
      framesPerSecondSampled: fps,
      enrol: {
        status: enrolled.result?.status,
        ...(enrolled.result?.reason ? { reason: enrolled.result.reason } : {}),
        firstFrameToResultMs: Math.round((enrolled.metrics.resultMs ?? NaN) - (enrolled.metrics.firstFrameMs ?? NaN)),
      },
      verify: verifies,
      sustained,
    };
  } finally {
    await booted.close();
    await rm(dir, { recursive: true, force: true });
  }
}
