// npm run bench -- capture --stages 10 [--baseline DIR]: one capture's stages (capture-stages.ts).
// npm run bench -- capture --frame-stages [--rounds N] [--backend wasm|native]: one frame's analysis CPU by stage
// (capture-frame-stages.ts).
// npm run bench -- capture --send 6 [--baseline DIR]: the browser's and the decoder's CPU while a capture streams
// (capture-send.ts).
// npm run bench -- capture [--sessions 1,2,4,8] [--sidecar child|inprocess] [--clients inprocess|child] [--open before|in-level] [--fps 5] [--timeout 60]
//                          [--liveness-frames 10] [--select-frames 1] [--sustain-fraction 0.5] [--workers N] [--baseline-frames 24] [--noise 0]
// Biometric capture over the live stream, the whole way a user takes it (the setup of
// test/browser/gateway-capture.test.ts, test/support/capture-rig.ts): each session is a Chromium whose fake camera
// plays a clip made from a test photo, the page runs the SDK's captureWithGateway over the gateway operations,
// Janus (VideoRoom) forwards the VP8 to the sidecar's ffmpeg decoder, and the sampled frames go through the
// extraction pool to the operation. Ramp: N sessions at once per level, each a real VERIFY of one enrolled
// subject (one of three photos of them, in turn), after one ENROLL capture alone. Reported per level: sessions
// completed, connect -> first frame -> result, frames analysed per second per session and in total, frames the
// decoders sampled but no session analysed, how old frames were when analysed, and the CPU taken by the service,
// Janus, the decoders and the browsers. Baseline, same run: the pool alone on frames the sessions decoded.
// The browsers (the clients' work: capture and VP8 encoding) run on the same two cores as the service, so the
// figures are a lower bound of what the service alone sustains; `cpu` says how much the browsers took.
// --sidecar child (default): the sidecar in its own process, as npm start runs it (capture-sidecar.ts); the
// decoders' own figures (frames sampled and dropped, frame ages) are then not seen. inprocess: in this process,
// those figures too, but every decoder's ffmpeg is forked from the service's process (stalling it).
// --clients inprocess (default, as the figures so far were measured): the browsers are launched and driven
// (Playwright) from this process, the service's, whose CPU then holds theirs; child: from a process of their own
// (capture-clients.ts), so that the service's CPU per analysed frame is the service's alone.
// --open before (default from 2026-11-28): a level's browsers are launched and on the capture page with the camera
// open before the level's clock and CPU meters start, and its captures then start together: a level measures N
// concurrent captures, as a person presses start on a page already open. in-level (the figures before): each
// session launches its Chromium inside the level, so six launches (a second or more of CPU each, some of it in
// processes that end before the meter reads them) overlap the captures they are meant to load.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { type Extractor, type ExtractOptions } from '../src/extraction/extractor.js';
import { RtpVideoDecoder } from '../src/sidecar/decoders/rtp-decoder.js';
import {
  openForOneCapture,
  clip,
  startCaptureRig,
  type BrowserCapture,
  type CaptureRig,
} from '../test/support/capture-rig.js';
import { startChildSidecar } from './capture-sidecar.js';
import { startCaptureClients, type CaptureClients } from './capture-clients.js';
import { benchPool, ensureMediaTools } from './shared-pool.js';
import { cpuByThread, threadCpu } from './thread-cpu.js';
import { startTestSidecar } from '../test/support/sidecar.js';

const ENROL_PHOTO = 'labelled/franck/franck_02159.jpg';
/**
 * Other photos of the enrolled person that a cooperative capture accepts: passive liveness scores them 85, 83
 * and 61 (the photo itself; its VP8 frames a little lower), over the threshold of 50. The others of this person
 * score 3-53, and a capture of them ends LIVENESS_CHECK_FAILED after the patience window, which is a refusal
 * to measure, not a session's capacity. Sessions take them in turn (two sessions may show the same photo).
 */
const VERIFY_PHOTOS = ['franck_02221', 'franck_02045', 'franck_01829'].map((name) => `labelled/franck/${name}.jpg`);

function option(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
}

const round = (n: number, digits = 1) => (Number.isFinite(n) ? Number(n.toFixed(digits)) : null);
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
/** Nearest rank: the value at or below which p% fall (with fewer than 20 values, p95 is the largest). */
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)]! : NaN;
};
const summary = (xs: number[]) => ({ mean: round(mean(xs), 0), p95: round(pct(xs, 95), 0) });
const hash = (bytes: Uint8Array) => createHash('sha1').update(bytes).digest('base64');

/**
 * What the decoders did, read in this process (the test sidecar runs in it): each sampled frame as ffmpeg wrote
 * it (time, by content), and each frame its queue dropped (it keeps the newest 4 when nobody reads). Wraps the
 * decoder's delivery instead of changing it: the capture exposes no such figure and src/ is not the bench's.
 */
const decoded = { frames: 0, dropped: 0, at: new Map<string, number[]>() };
function watchDecoders(): void {
  const proto = RtpVideoDecoder.prototype as unknown as { deliver(this: RtpVideoDecoder, frame: Buffer): void };
  const deliver = proto.deliver;
  proto.deliver = function (this: RtpVideoDecoder, frame: Buffer) {
    const self = this as unknown as { listener: unknown; queue: Buffer[] };
    if (this.spec.codec !== 'OPUS') {
      decoded.frames += 1;
      const key = hash(frame);
      const times = decoded.at.get(key) ?? [];
      times.push(performance.now());
      decoded.at.set(key, times);
      if (!self.listener && self.queue.length >= 4) {
        decoded.dropped += 1;
        decoded.at.get(hash(self.queue[0]!))?.shift();
      }
    }
    deliver.call(this, frame);
  };
}

/** The extraction pool, with each analysis of a decoded frame timed: its age (since ffmpeg wrote it) and its cost. */
interface Analysed {
  ageMs: number;
  ms: number;
}
function watchedPool(
  pool: Extractor,
  seen: { analysed: Analysed[]; frames: Uint8Array[]; options?: ExtractOptions },
): Extractor {
  return {
    get templateVersion() {
      return pool.templateVersion;
    },
    get voiceTemplateVersion() {
      return pool.voiceTemplateVersion;
    },
    async analyseFace(bytes, options) {
      // The embedding of a frame a session kept (issue 33): part of its operation, not a frame analysed.
      if (options?.embedFaces) return pool.analyseFace(bytes, options);
      const key = hash(bytes);
      const deliveredAt = decoded.at.get(key)?.shift();
      // Every analysed frame is a decoded one (the enrolment's photo is analysed outside this pool).
      const copy = seen.frames.length < 200 ? new Uint8Array(bytes) : null;
      const t0 = performance.now();
      const result = await pool.analyseFace(bytes, options);
      seen.analysed.push({ ageMs: deliveredAt === undefined ? NaN : t0 - deliveredAt, ms: performance.now() - t0 });
      if (copy) seen.frames.push(copy);
      if (options) seen.options = { ...options, signal: undefined };
      return result;
    },
    analyseVoice: (bytes, options) => pool.analyseVoice(bytes, options),
    renderTokenImage: (bytes, options) => pool.renderTokenImage(bytes, options),
    stats: () => pool.stats(),
    close: () => pool.close(),
  };
}

/** CPU ticks (user + system) of this process and every process under it, by group, and of the whole machine. */
type Group = 'service' | 'serviceMainThread' | 'sidecar' | 'janus' | 'decoders' | 'browsers' | 'clients' | 'other';
/** The process driving the browsers with `--clients child` (capture-clients.ts): its own group, not the sidecar's. */
let clientsPid: number | undefined;
/** Where the main thread's ticks are kept (no process has this id): a part of `service`, counted apart. */
const MAIN_THREAD = -1;
/**
 * The processes under this one as the last whole scan of /proc found them. A scan reads every process's stat
 * (hundreds, with other jobs on the machine: 3-13 ms of this main thread each, which the level's figures
 * counted as the service's): it runs every {@link RESCAN_EVERY}th sample, and the samples between read only the
 * processes found, which covers every decoder and browser (they live for their session, several seconds).
 */
let known: number[] = [];
let samples = 0;
const RESCAN_EVERY = 4;
function processTicks(fullScan = false): Map<number, { group: Group; ticks: number }> {
  const parent = new Map<number, number>();
  const info = new Map<number, { comm: string; ticks: number }>();
  const rescan = samples++ % RESCAN_EVERY === 0 || fullScan;
  for (const entry of rescan ? readdirSync('/proc') : known.map(String)) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const f = stat.slice(close + 2).split(' ');
      parent.set(Number(entry), Number(f[1]));
      info.set(Number(entry), { comm, ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      // ended meanwhile
    }
  }
  const out = new Map<number, { group: Group; ticks: number }>();
  const mine: number[] = [];
  for (const [pid, { comm, ticks }] of info) {
    let p: number | undefined = pid;
    while (p && p !== process.pid) p = parent.get(p);
    // Between scans only known descendants are read (their parents may not be): they stay ours.
    if (p !== process.pid && (rescan || !known.includes(pid))) continue;
    mine.push(pid);
    const group: Group =
      pid === process.pid
        ? 'service'
        : pid === clientsPid
          ? 'clients'
          : comm === 'node'
            ? 'sidecar'
            : comm.startsWith('janus')
              ? 'janus'
              : comm === 'ffmpeg'
                ? 'decoders'
                : /chrom/i.test(comm)
                  ? 'browsers'
                  : 'other';
    out.set(pid, { group, ticks });
  }
  known = mine;
  // The service's main thread alone (API, PGlite, HTTP to Janus and the sidecar, and this bench's Playwright and
  // sampling), apart from the extraction pool's threads: what the service spends beyond the analyses.
  try {
    const stat = readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(MAIN_THREAD, { group: 'serviceMainThread', ticks: Number(f[11]) + Number(f[12]) });
  } catch {
    // not Linux
  }
  return out;
}
function machineTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3]! - f[4]!, total };
}

/**
 * Samples CPU every half second while a level runs: cores used (CPU seconds per second) by each group, and by
 * the whole machine (other users of the machine included). A process that ends between samples loses at most
 * its last half second.
 */
function cpuMeter() {
  // A whole scan at the start: a process started since the last one (a browser opened before the level) must
  // start from its ticks now, not be found later and counted from zero with its launch.
  const first = new Map<number, { group: Group; ticks: number }>(processTicks(true));
  const last = new Map(first);
  const machine0 = machineTicks();
  const started = performance.now();
  const timer = setInterval(() => {
    for (const [pid, t] of processTicks()) {
      if (!first.has(pid)) first.set(pid, { group: t.group, ticks: 0 });
      last.set(pid, t);
    }
  }, 500);
  return () => {
    clearInterval(timer);
    for (const [pid, t] of processTicks(true)) last.set(pid, t);
    const seconds = (performance.now() - started) / 1000;
    const cores: Record<string, number | null> = {
      service: 0,
      serviceMainThread: 0,
      sidecar: 0,
      janus: 0,
      decoders: 0,
      browsers: 0,
      clients: 0,
      other: 0,
    };
    for (const [pid, t] of last)
      cores[t.group] = (cores[t.group] ?? 0) + (t.ticks - (first.get(pid)?.ticks ?? 0)) / 100 / seconds;
    for (const k of Object.keys(cores)) cores[k] = round(cores[k]!, 2);
    const m1 = machineTicks();
    return {
      seconds: round(seconds, 1),
      coresUsed: cores,
      machineBusyCores: round(((m1.busy - machine0.busy) / (m1.total - machine0.total)) * availableParallelism(), 2),
      loadAverage1m: round(loadavg()[0]!, 2),
    };
  };
}

/** One capture's figures from its outcome (metrics) and its events (server times). */
function figures(c: BrowserCapture, fps: number) {
  const at = (type: string) => {
    const e = c.events.find((x) => x.type === type);
    return e?.at ? Date.parse(e.at) : NaN;
  };
  const m = c.metrics;
  const firstFrameMs = m.firstFrameMs ?? NaN;
  const resultMs = m.resultMs ?? NaN;
  // Frames analysed between the first (MEDIA) and the operation's start (PROCESSING; the outcome if none).
  const windowMs = (Number.isFinite(at('PROCESSING')) ? at('PROCESSING') : at(c.state)) - at('MEDIA');
  const analysedPerSecond = (m.framesAnalysed ?? 0) / (windowMs / 1000);
  return {
    state: c.state,
    status: c.result?.status ?? c.state,
    ...(c.result?.reason ? { reason: c.result.reason } : {}),
    connectToFirstFrameMs: firstFrameMs,
    firstFrameToResultMs: resultMs - firstFrameMs,
    connectToResultMs: resultMs,
    framesDecoded: m.framesDecoded ?? 0,
    framesAnalysed: m.framesAnalysed ?? 0,
    analyseMsPerFrame: m.analyseMsPerFrame ?? NaN,
    analysedPerSecond,
    fractionOfRequested: analysedPerSecond / fps,
    clientMs: c.clientMs,
    // What the client was told, for a session that did not finish: the last guidance and how often each came.
    lastGuidance: [...c.events]
      .reverse()
      .find((e) => !['DONE', 'TIMEOUT', 'FAILED', 'PROCESSING', 'MEDIA', 'STARTED'].includes(e.type)),
    eventTypes: c.events.map((e) => e.type),
  };
}

/** The pool alone on decoded frames: one at a time (what one session can ask) and `inFlight` at once (its throughput). */
async function poolBaseline(
  pool: Extractor,
  frames: Uint8Array[],
  options: ExtractOptions | undefined,
  inFlight: number,
) {
  const pass = async (concurrency: number) => {
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < frames.length) await pool.analyseFace(new Uint8Array(frames[next++]!), options);
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    return {
      analyses: frames.length,
      analysesPerSecond: round(frames.length / seconds, 2),
      msPerAnalysis: round((seconds * 1000) / frames.length, 0),
    };
  };
  return { oneAtATime: await pass(1), saturated: { inFlight, ...(await pass(inFlight)) } };
}

export async function run(args: string[]) {
  // --stages N: where one capture's time goes, stage by stage (capture-stages.ts).
  if (args.includes('--stages')) return (await import('./capture-stages.js')).run(args);
  // --frame-stages: where one frame's analysis CPU goes, stage by stage (capture-frame-stages.ts).
  if (args.includes('--frame-stages')) return (await import('./capture-frame-stages.js')).run(args);
  // --send N: what the media costs while a capture streams, the browser's part included (capture-send.ts).
  if (args.includes('--send')) return (await import('./capture-send.js')).run(args);
  const levels = option(args, 'sessions', '1,2,4,8').split(',').map(Number);
  const fps = Number(option(args, 'fps', '5'));
  const timeoutSeconds = Number(option(args, 'timeout', '60'));
  const livenessFrames = Number(option(args, 'liveness-frames', '10'));
  const selectFrames = Number(option(args, 'select-frames', '1'));
  const sustainFraction = Number(option(args, 'sustain-fraction', '0.5'));
  const workers = Number(option(args, 'workers', String(availableParallelism())));
  const baselineFrames = Number(option(args, 'baseline-frames', '24'));
  // A sensor-like noise makes every frame differ, as a camera's do; it also lowers passive liveness (at 6 a
  // still photo scored 45-50 against the threshold of 50 and timed out), so none unless asked.
  const noise = Number(option(args, 'noise', '0'));

  const sidecarMode = option(args, 'sidecar', 'child');
  if (sidecarMode !== 'child' && sidecarMode !== 'inprocess') throw new Error('--sidecar child|inprocess');
  const clientsMode = option(args, 'clients', 'inprocess');
  if (clientsMode !== 'child' && clientsMode !== 'inprocess') throw new Error('--clients inprocess|child');
  await ensureMediaTools();
  // Forked first, while this process is small (a fork copies its page tables).
  const clients: CaptureClients | null = clientsMode === 'child' ? await startCaptureClients() : null;
  clientsPid = clients?.pid;
  const openMode = option(args, 'open', 'before');
  if (openMode !== 'before' && openMode !== 'in-level') throw new Error('--open before|in-level');
  /** A browser on the capture page with its camera open; its one capture closes it. */
  const open = (r: CaptureRig, clipPath: string) =>
    clients ? clients.open(r, clipPath) : openForOneCapture(r, clipPath);
  const capture = async (r: CaptureRig, clipPath: string, params: Record<string, unknown>) =>
    (await open(r, clipPath)).start(params);
  watchDecoders();
  const seen: { analysed: Analysed[]; frames: Uint8Array[]; options?: ExtractOptions } = { analysed: [], frames: [] };
  const { pool, backend } = await benchPool(workers);
  const loadAtStart = loadavg().map((l) => round(l, 2));
  // Every session is the same account's: its shares must hold the largest level (each cap at most half its total).
  const most = Math.max(...levels) + 2;
  const caps = (per: string, total: string, fallback: number) => ({
    [per]: String(Math.max(fallback, most)),
    [total]: String(2 * Math.max(fallback, most)),
  });
  const decoderCaps = caps('BIMS_DECODERS_PER_ACCOUNT', 'BIMS_DECODERS_TOTAL', 16);
  let rig: CaptureRig | undefined;
  try {
    rig = await startCaptureRig({
      env: {
        BIMS_CAPTURE_LINGER_SECONDS: '2',
        BIMS_CHECK_ANSWERS: 'off',
        ...caps('BIMS_CAPTURES_PER_ACCOUNT', 'BIMS_CAPTURES_TOTAL', 4),
        ...caps('BIMS_GATEWAY_SESSIONS_PER_ACCOUNT', 'BIMS_GATEWAY_SESSIONS_TOTAL', 8),
        ...decoderCaps,
      },
      createExtractor: async () => ({ ...watchedPool(pool, seen), close: async () => {} }),
      // The sidecar counts the decoders (one per session; they end with their capture).
      startSidecar: (env) =>
        (sidecarMode === 'child' ? startChildSidecar : startTestSidecar)({ ...env, ...decoderCaps }),
    });
    const r = rig;
    const params = { framesPerSecond: fps, timeoutSeconds, livenessFrames, selectFrames };
    const clipOf = (name: string, photo: string) => clip(r, name, photo, { seconds: 3, noise });
    const clips = await Promise.all(
      Array.from({ length: Math.max(...levels) }, (_, i) =>
        clipOf(`verify-${i}`, VERIFY_PHOTOS[i % VERIFY_PHOTOS.length]!),
      ),
    );
    // Models loaded and compiled before anything is timed; then the subject every level verifies, enrolled by a capture.
    await (await r.booted.services.extractors.get()).analyseFace(
      new Uint8Array(readFileSync(fileURLToPath(new URL(`../test/fixtures/photos/${ENROL_PHOTO}`, import.meta.url)))),
      { checks: true },
    );
    const enrolCapture = await capture(r, await clipOf('enrol', ENROL_PHOTO), {
      kind: 'FV',
      purpose: 'ENROLL',
      subjectId: 'bench-franck',
      ...params,
    });
    const enrol = figures(enrolCapture, fps);
    if (enrol.status !== 'SUCCESS')
      throw new Error(
        `the enrolling capture ended ${enrol.state} ${enrol.status} ${enrolCapture.result?.reason ?? ''}`,
      );

    const results = [];
    for (const n of levels) {
      decoded.at.clear();
      const frames0 = decoded.frames;
      const dropped0 = decoded.dropped;
      const analysed0 = seen.analysed.length;
      const verify = { kind: 'FV', purpose: 'VERIFY', subjectId: 'bench-franck', ...params };
      // --open before: the level's browsers launched and on the page, camera open, before its clock and meters
      // start, then every capture started at once; in-level: each session launches its browser in the level.
      const pages = openMode === 'before' ? await Promise.all(clips.slice(0, n).map((c) => open(r, c))) : null;
      const stop = cpuMeter();
      const threads0 = threadCpu();
      const t0 = performance.now();
      const captures = await Promise.all(
        clips
          .slice(0, n)
          .map((c, i) => (pages ? pages[i]!.start(verify) : capture(r, c, verify)).catch((error: Error) => error)),
      );
      const wallSeconds = (performance.now() - t0) / 1000;
      const distinct = new Set(decoded.at.keys());
      const cpu = stop();
      const threads1 = threadCpu();
      const ok = captures.filter((c): c is BrowserCapture => !(c instanceof Error)).map((c) => figures(c, fps));
      const errors = captures.filter((c): c is Error => c instanceof Error).map((e) => e.message.slice(0, 200));
      const completed = ok.filter((f) => f.state === 'DONE');
      const perSession = ok.map((f) => f.analysedPerSecond).filter(Number.isFinite);
      const analysed = seen.analysed.slice(analysed0);
      const minFraction = Math.min(...ok.map((f) => f.fractionOfRequested));
      const statuses: Record<string, number> = {};
      for (const f of ok) statuses[f.status] = (statuses[f.status] ?? 0) + 1;
      results.push({
        sessions: n,
        completed: completed.length,
        statuses,
        ...(errors.length ? { errors } : {}),
        sustained: completed.length === n && minFraction >= sustainFraction,
        events: ok
          .flatMap((f) => f.eventTypes)
          .reduce<Record<string, number>>((counts, t) => ({ ...counts, [t]: (counts[t] ?? 0) + 1 }), {}),
        ...(ok.some((f) => f.state !== 'DONE')
          ? { unfinishedLastGuidance: ok.filter((f) => f.state !== 'DONE').map((f) => f.lastGuidance ?? null) }
          : {}),
        connectToFirstFrameMs: summary(ok.map((f) => f.connectToFirstFrameMs)),
        firstFrameToResultMs: summary(completed.map((f) => f.firstFrameToResultMs)),
        connectToResultMs: summary(completed.map((f) => f.connectToResultMs)),
        clientMs: summary(ok.map((f) => f.clientMs)),
        framesAnalysedPerSecondPerSession: { mean: round(mean(perSession), 2), min: round(Math.min(...perSession), 2) },
        framesAnalysedPerSecondTotal: round(
          perSession.reduce((a, b) => a + b, 0),
          2,
        ),
        minFractionOfRequestedFps: round(minFraction, 2),
        framesAnalysed: ok.reduce((s, f) => s + f.framesAnalysed, 0),
        decoder:
          sidecarMode === 'child'
            ? null
            : {
                framesSampled: decoded.frames - frames0,
                framesDroppedByQueue: decoded.dropped - dropped0,
                framesNeverAnalysed: decoded.frames - frames0 - ok.reduce((s, f) => s + f.framesDecoded, 0),
              },
        frameAgeAtAnalysisMs: summary(analysed.map((a) => a.ageMs)),
        distinctFrameShare: round(distinct.size / Math.max(1, decoded.frames - frames0), 2),
        analysisMsPerFrame: summary(analysed.map((a) => a.ms)),
        wallSeconds: round(wallSeconds, 1),
        cpu,
        // CPU, unlike wall time, hardly depends on what else the machine runs: the service's cost of one analysed
        // frame (its share of the operation, the API and the sidecar included) and the media path's per session.
        serviceCpuMsPerAnalysedFrame: round(
          (((cpu.coresUsed.service ?? 0) * (cpu.seconds ?? 0)) /
            Math.max(
              1,
              ok.reduce((s, f) => s + f.framesAnalysed, 0),
            )) *
            1000,
          0,
        ),
        // The main thread's part of it: the service's own work beside the pool (and the bench's Playwright).
        serviceMainThreadCpuMsPerAnalysedFrame: round(
          (((cpu.coresUsed.serviceMainThread ?? 0) * (cpu.seconds ?? 0)) /
            Math.max(
              1,
              ok.reduce((s, f) => s + f.framesAnalysed, 0),
            )) *
            1000,
          0,
        ),
        // The service's CPU per analysed frame by thread: the main thread, the pool's workers (by thread id), and
        // the rest together (V8's GC and compiler threads, libuv's pool), which the main thread's garbage and
        // first runs of code (wasm tier-up) load.
        serviceCpuMsPerAnalysedFrameByThread: cpuByThread(
          threads0,
          threads1,
          Math.max(
            1,
            ok.reduce((s, f) => s + f.framesAnalysed, 0),
          ),
        ),
        // With --clients child: the bench's own driver of the browsers (launches, Playwright), which the
        // service's figures above no longer hold.
        clientsCpuMsPerAnalysedFrame:
          clientsMode === 'child'
            ? round(
                (((cpu.coresUsed.clients ?? 0) * (cpu.seconds ?? 0)) /
                  Math.max(
                    1,
                    ok.reduce((s, f) => s + f.framesAnalysed, 0),
                  )) *
                  1000,
                0,
              )
            : null,
        mediaCoresPerSession: round(
          ((cpu.coresUsed.janus ?? 0) + (cpu.coresUsed.decoders ?? 0) + (cpu.coresUsed.sidecar ?? 0)) / n,
          3,
        ),
        browserCoresPerSession: round((cpu.coresUsed.browsers ?? 0) / n, 3),
      });
    }
    // From CPU accounting, not measured: the sessions two idle cores would hold at the sustained rate, the
    // browsers elsewhere (as they are in use), from the level that analysed the most frames.
    const basis = [...results].sort((a, b) => b.framesAnalysed - a.framesAnalysed)[0]!;
    const coresPerSession =
      ((basis.serviceCpuMsPerAnalysedFrame ?? NaN) / 1000) * sustainFraction * fps + (basis.mediaCoresPerSession ?? 0);
    const projection = {
      from: `level of ${basis.sessions} session(s): ${basis.serviceCpuMsPerAnalysedFrame} ms of service CPU per analysed frame, ${basis.mediaCoresPerSession} cores of Janus and decoder per session`,
      coresPerSessionAtSustainedRate: round(coresPerSession, 3),
      sessionsOnTwoIdleCores: Math.floor(2 / coresPerSession),
    };
    const baseline = await poolBaseline(pool, seen.frames.slice(-baselineFrames), seen.options, 2 * workers);
    const single = results.find((l) => l.sessions === 1);
    const best = Math.max(...results.map((l) => l.framesAnalysedPerSecondTotal ?? 0));
    return {
      host: {
        cpus: availableParallelism(),
        workers,
        backend,
        sidecar: sidecarMode,
        clients: clientsMode,
        open: openMode,
        mediaPath: r.net.describe,
        loadAverageAtStart: loadAtStart,
        loadAverageAtEnd: loadavg().map((l) => round(l, 2)),
      },
      params: {
        kind: 'FV',
        purpose: 'VERIFY (levels), ENROLL (first)',
        ...params,
        clip: `640x480 Y4M at 10 fps, 3 s looped, noise ${noise}; the photos taken in turn`,
      },
      definitions: {
        sustained: `every session of the level DONE within timeoutSeconds, and each analysed at least sustainFraction (${sustainFraction}) x framesPerSecond (${fps}) frames a second between its first frame (MEDIA) and the operation (PROCESSING)`,
        firstFrameToResultMs:
          'server: the outcome less the first decoded frame (metrics.resultMs - metrics.firstFrameMs), operation included',
        connectToResultMs: 'server: from connect (the capture session made) to the outcome (metrics.resultMs)',
        clientMs:
          'in the page: from captureWithGateway (after getUserMedia) to the outcome read by its trickle polling',
        framesNeverAnalysed:
          'frames the decoders wrote that no session took (dropped by the decoder queue, or in flight when the session ended)',
        frameAgeAtAnalysisMs:
          'from ffmpeg writing a frame to its analysis starting (the sidecar -> API stream and the wait behind other frames); frames are matched by content, oldest first, so where frames repeat (distinctFrameShare below 1) a dropped frame may be matched to an older copy and the age is a lower bound',
        cpu: 'cores used during the level: service = this process (API, the sidecar when inprocess, extraction pool threads), sidecar = its own process (child), janus, decoders (ffmpeg), browsers (Chromium: the clients), clients = the process driving them with --clients child (Playwright), machine = everything on the host',
        serviceCpuMsPerAnalysedFrame:
          "the service's CPU during the level over the frames its sessions analysed (the operations, API and sidecar included): the cost, which the machine's load hardly changes",
        serviceMainThreadCpuMsPerAnalysedFrame:
          "the part of serviceCpuMsPerAnalysedFrame spent on the service's main thread (API, PGlite, HTTP to Janus and the sidecar, this bench's sampling, and with --clients inprocess its Playwright client and the browsers' launches), i.e. beside the extraction pool's threads",
        projection:
          'from CPU accounting, not measured: sessions two idle cores would hold at sustainFraction x framesPerSecond with the browsers on other machines',
      },
      sustainedSessions: Math.max(0, ...results.filter((l) => l.sustained).map((l) => l.sessions)),
      projection,
      enrol: {
        ...Object.fromEntries(
          Object.entries(enrol)
            .filter(([k]) => k !== 'eventTypes' && k !== 'lastGuidance')
            .map(([k, v]) => [k, typeof v === 'number' ? round(v, 2) : v]),
        ),
      },
      levels: results,
      baseline: {
        frames: Math.min(baselineFrames, seen.frames.length),
        what: 'the same extraction pool on decoded frames of these sessions, with the options the capture used',
        ...baseline,
      },
      ratios: {
        oneSessionToPoolOneAtATime: single
          ? round(
              (single.framesAnalysedPerSecondPerSession.mean ?? NaN) / (baseline.oneAtATime.analysesPerSecond ?? NaN),
              2,
            )
          : null,
        bestTotalToPoolSaturated: round(best / (baseline.saturated.analysesPerSecond ?? NaN), 2),
      },
    };
  } finally {
    await rig?.close();
    await pool.close();
    clients?.close();
  }
}
