// npm run bench -- capture --frame-formats: what the capture frames' format changes in their analyses (issue 33).
// The capture bench's four photos of one person, fitted into 640x480 as the fake cameras play them (yuv420p), go
// through the decoder's output as it was (ffmpeg's mjpeg at -q:v 2, decoded by the pool) and as it is (rgb24 PPM,
// analysed as pixels), and the raw frame's stored JPEG is analysed again (what a re-extraction sees). Printed per
// photo: detector score, quality, passive liveness, sharpness, brightness, eye distance, and the VERIFY score
// against the enrolment photo's own embedding, with the JPEG sizes. Then, inline on one thread (one pool worker's
// work) in process CPU, alternated for --rounds (default 6): a frame's analysis with a capture's VERIFY measures
// (frameMeasures) from the mjpeg frame (decoded first) and from the raw one, and the JPEG of a kept frame.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cosineToScore } from '../src/biometrics/calibration.js';
import type { FaceAnalysis } from '../src/biometrics/face/analysis.js';
import { createExtractor } from '../src/extraction/index.js';
import { readPpmFrame } from '../src/protocols/ppm-frames.js';
import { analyseFrame, analyseImage } from '../src/biometrics/face/pipeline.js';
import { encodeJpeg } from '../src/biometrics/image/jpeg-encode.js';
import { frameMeasures } from '../src/services/biometrics/analyse-samples.js';
import { loadavg } from 'node:os';
import { benchRunner, cpu } from './face-stages.js';

const PHOTOS = fileURLToPath(new URL('../test/fixtures/photos/labelled/franck/', import.meta.url));
/** The capture bench's person: the enrolment photo and the three that verify (capture.ts). */
const FRAME_PHOTOS = ['franck_02159', 'franck_02221', 'franck_02045', 'franck_01829'];
/** The decoder's scaling (src/sidecar/decoders/rtp-decoder.ts): a 640x480 camera is left at its size. */
const SCALE = "scale=w='if(gte(iw,ih),min(640,iw),-2)':h='if(gte(iw,ih),-2,min(640,ih))':flags=bilinear";

const ffmpeg = (args: string[], input?: Buffer) =>
  execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', ...args], { input, maxBuffer: 64 << 20 });
const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! ** 2;
    nb += b[i]! ** 2;
  }
  return dot / Math.sqrt(na * nb);
};
const r = (n: number, d = 2) => Number(n.toFixed(d));

export async function run(args: string[]) {
  const rounds = Number(args.includes('--rounds') ? args[args.indexOf('--rounds') + 1] : 6);
  const pool = await createExtractor({ mode: 'worker-threads', size: 2 });
  try {
    const enrolled = (await pool.analyseFace(new Uint8Array(readFileSync(`${PHOTOS}${FRAME_PHOTOS[0]}.jpg`))))
      .faces[0]!;
    const measured = (f: FaceAnalysis) => ({
      detection: r(f.detectionScore, 4),
      quality: r(f.quality),
      liveness: r(f.livenessScore),
      sharpness: r(f.sharpness),
      brightness: r(f.brightness),
      eyeDistance: r(f.interEyeDistance),
      verifyScore: r(cosineToScore(cosine(f.embedding, enrolled.embedding))),
    });
    const photos = [];
    const frames: { mjpeg: Uint8Array; raw: ReturnType<typeof readPpmFrame> }[] = [];
    for (const name of FRAME_PHOTOS) {
      const fit = 'scale=640:480:force_original_aspect_ratio=decrease,pad=640:480:(ow-iw)/2:(oh-ih)/2,format=yuv420p';
      const y4m = ffmpeg(['-i', `${PHOTOS}${name}.jpg`, '-vf', fit, '-frames:v', '1', '-f', 'yuv4mpegpipe', 'pipe:1']);
      const decoder = (out: string[]) =>
        ffmpeg(['-f', 'yuv4mpegpipe', '-i', 'pipe:0', '-vf', SCALE, '-f', 'image2pipe', ...out, 'pipe:1'], y4m);
      const mjpeg = decoder(['-c:v', 'mjpeg', '-pix_fmt', 'yuvj420p', '-q:v', '2']);
      const ppm = decoder(['-c:v', 'ppm', '-pix_fmt', 'rgb24']);
      const [before, after] = await Promise.all([
        pool.analyseFace(new Uint8Array(mjpeg)),
        pool.analyseFrame(readPpmFrame(new Uint8Array(ppm)), { jpeg: true }),
      ]);
      const stored = await pool.analyseFace(after.jpeg!);
      frames.push({ mjpeg: new Uint8Array(mjpeg), raw: readPpmFrame(new Uint8Array(ppm)) });
      photos.push({
        photo: name,
        mjpegFrame: measured(before.faces[0]!),
        rawFrame: measured(after.faces[0]!),
        rawFrameStoredJpeg: measured(stored.faces[0]!),
        embeddingCosineMjpegToRaw: r(cosine(before.faces[0]!.embedding, after.faces[0]!.embedding), 5),
        bytes: { mjpegFrame: mjpeg.length, storedJpeg: after.jpeg!.length },
      });
    }
    const runner = await benchRunner('wasm');
    const gates = {
      allowMultiple: false,
      minQuality: 50,
      requireLiveness: true,
      livenessThreshold: 50,
      checkIcao: false,
    };
    const measures = frameMeasures('VERIFY', gates);
    const spent = { mjpeg: [] as number[], raw: [] as number[], keptJpeg: [] as number[] };
    const loads = [loadavg()[0]!];
    for (let round = 0; round < rounds + 1; round++) {
      // Round 0 warms both paths; then mjpeg and raw go first in turn.
      const order = round % 2 ? (['raw', 'mjpeg'] as const) : (['mjpeg', 'raw'] as const);
      for (const side of order) {
        const t0 = cpu();
        for (const f of frames)
          await (side === 'raw' ? analyseFrame(runner, f.raw, measures) : analyseImage(runner, f.mjpeg, measures));
        if (round > 0) spent[side].push((cpu() - t0) / frames.length);
      }
      const t0 = cpu();
      await encodeJpeg(frames[round % frames.length]!.raw);
      if (round > 0) spent.keptJpeg.push(cpu() - t0);
    }
    loads.push(loadavg()[0]!);
    const median = (xs: number[]) => r([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!, 1);
    const cpuMsPerFrame = {
      mjpegFrame: median(spent.mjpeg),
      rawFrame: median(spent.raw),
      ratio: r(median(spent.raw) / median(spent.mjpeg), 3),
      keptFrameJpeg: median(spent.keptJpeg),
      rounds,
      loadAverage1m: loads.map((l) => r(l, 1)),
    };
    return { benchmark: 'capture --frame-formats', photos, cpuMsPerFrame };
  } finally {
    await pool.close();
  }
}
