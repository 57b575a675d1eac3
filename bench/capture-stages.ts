// npm run bench -- capture --stages 10 [--baseline DIR] [--sidecar child|inprocess] [--trace] [--fps 5] [--liveness-frames 3] [--workers N]
// Where the time of one cooperative capture goes, from the page's connect to the result: each capture is a
// Chromium whose fake camera plays a test photo, running the SDK's captureWithGateway over the real Janus
// (the rig of test/browser/gateway-capture.test.ts), one at a time, a VERIFY of the enrolled person with the
// service's default params. Stages, in ms from the page sending connect (median and p90 over the captures):
//   connectAnswered    the page has Janus's answer (room made, offer published)
//   iceGathered        the page's ICE candidates all gathered (the SDK trickles them then)
//   iceConnected       ICE connected (the page's RTCPeerConnection)
//   dtlsConnected      DTLS done: the PeerConnection is up
//   firstRtpSent       the camera's first RTP packet sent
//   firstKeyframe      the keyframe the first decoded frame came from (the last one encoded before it)
//   firstDecodedFrame  the service's MEDIA event: the decoder delivered a frame
//   firstAnalysis      the first guidance event after it: a frame analysed and judged
//   result             the service's DONE event
//   resultSeen         the page read the outcome (its trickle polling)
// and `fromStartedMs`: the first decoded frame, the first analysis and the result from the service's STARTED event
// (its own clock only), which a baseline whose page has no marks (before capture-timing.ts) can be compared on.
// --sidecar child (default) runs the sidecar in its own process as npm start does (capture-sidecar.ts says why);
// inprocess as the browser tests do. --trace adds each connect's steps inside the service (capture-connect-trace.ts).
// With --baseline DIR (another checkout, e.g. `git worktree add /tmp/before main`), its service runs beside this
// one in the same process, with its own sidecar (decoders) and its own SDK in the page, and the captures
// alternate between the two, so both see the same load.
import { loadavg, availableParallelism } from 'node:os';
import {
  captureInBrowser,
  clip,
  startCaptureRig,
  type BrowserCapture,
  type CaptureRig,
} from '../test/support/capture-rig.js';
import { takeTraces, traceConnects } from './capture-connect-trace.js';
import { startChildSidecar } from './capture-sidecar.js';
import { startBenchPool } from './shared-pool.js';

const ENROL_PHOTO = 'labelled/franck/franck_02159.jpg';
// Photos a cooperative capture accepts (bench/capture.ts says how they were chosen): 03909 and 04000, which
// passive liveness scores 53 and 40 as photos, ended every capture LIVENESS_CHECK_FAILED by the patience window
// (10 s), and were the p90 of `result` (14.8-21.7 s) rather than any wait.
const VERIFY_PHOTOS = ['franck_02221', 'franck_02045', 'franck_01829'].map((name) => `labelled/franck/${name}.jpg`);
const GUIDANCE = new Set([
  'NO_FACE',
  'MULTIPLE_FACES',
  'MOVE_CLOSER',
  'LOOK_STRAIGHT',
  'LOW_QUALITY',
  'HOLD_STILL',
  'FACE_FOUND',
]);
const STAGES = [
  'connectAnswered',
  'iceGathered',
  'iceConnected',
  'dtlsConnected',
  'firstRtpSent',
  'firstKeyframe',
  'firstDecodedFrame',
  'firstAnalysis',
  'result',
  'resultSeen',
] as const;
type Stage = (typeof STAGES)[number];

function option(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
}

/** Nearest rank. */
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)]! : NaN;
};

/**
 * When the service's events say things happened (ms since the epoch, NaN where not seen): `at(type)` the first
 * event of a type, `media` the first decoded frame (MEDIA), `firstAnalysis` the first guidance after it.
 */
function eventTimes(c: BrowserCapture) {
  const at = (type: string) => {
    const e = c.events.find((x) => x.type === type);
    return e?.at ? Date.parse(e.at) : NaN;
  };
  const mediaIndex = c.events.findIndex((e) => e.type === 'MEDIA');
  const analysed = c.events.slice(mediaIndex + 1).find((e) => GUIDANCE.has(e.type));
  return { at, media: at('MEDIA'), firstAnalysis: mediaIndex >= 0 && analysed?.at ? Date.parse(analysed.at) : NaN };
}

/** One capture's stages in ms from the page's connect; NaN where the stage was not seen. */
export function stagesOf(c: BrowserCapture): Record<Stage, number> {
  const marks = c.timing?.marks ?? {};
  const t0 = marks.connectSent ?? NaN;
  const { at, media, firstAnalysis } = eventTimes(c);
  const keyframe = Math.max(...(c.timing?.keyframes ?? []).filter((k) => k <= media + 20));
  const abs: Record<Stage, number> = {
    connectAnswered: marks.connectAnswered ?? NaN,
    iceGathered: marks.iceGathered ?? NaN,
    iceConnected: marks.iceConnected ?? NaN,
    dtlsConnected: marks.dtlsConnected ?? NaN,
    firstRtpSent: marks.firstRtpSent ?? NaN,
    firstKeyframe: Number.isFinite(keyframe) ? keyframe : NaN,
    firstDecodedFrame: media,
    firstAnalysis,
    result: at('DONE'),
    resultSeen: marks.outcome ?? NaN,
  };
  return Object.fromEntries(STAGES.map((s) => [s, abs[s] - t0])) as Record<Stage, number>;
}

/** The stages the service's own events show, in ms from its STARTED event: what a tree without page marks (a
 * baseline from before capture-timing.ts) can be compared on. */
const SERVER_STAGES = ['firstDecodedFrame', 'firstAnalysis', 'result'] as const;
export function serverStagesOf(c: BrowserCapture): Record<(typeof SERVER_STAGES)[number], number> {
  const { at, media, firstAnalysis } = eventTimes(c);
  const started = at('STARTED');
  return {
    firstDecodedFrame: media - started,
    firstAnalysis: firstAnalysis - started,
    result: at('DONE') - started,
  };
}

function summarise(runs: Record<Stage, number>[]) {
  return Object.fromEntries(
    STAGES.map((s) => {
      const xs = runs.map((r) => r[s]).filter(Number.isFinite);
      return [s, { median: Math.round(pct(xs, 50)), p90: Math.round(pct(xs, 90)), n: xs.length }];
    }),
  );
}

export async function run(args: string[]) {
  const captures = Number(option(args, 'stages', '10'));
  const baselineDir = option(args, 'baseline', '');
  const fps = Number(option(args, 'fps', '5'));
  const livenessFrames = Number(option(args, 'liveness-frames', '3'));
  const workers = Number(option(args, 'workers', String(availableParallelism())));
  const trace = args.includes('--trace');
  // child: as npm start runs it; inprocess: as the browser tests do (its ffmpeg spawns fork this process).
  const sidecarMode = option(args, 'sidecar', 'child');
  if (sidecarMode !== 'child' && sidecarMode !== 'inprocess') throw new Error('--sidecar child|inprocess');
  const startSidecar = sidecarMode === 'child' ? startChildSidecar : undefined;
  if (trace) traceConnects();
  // One pool for both services (the baseline's too): the same analysis cost on either side.
  const { pool, shared, backend } = await startBenchPool(workers);
  const env = { BIMS_CAPTURE_LINGER_SECONDS: '2', BIMS_CHECK_ANSWERS: 'off' };
  const loadAtStart = loadavg().map((l) => Number(l.toFixed(2)));
  const trees: {
    name: string;
    rig: CaptureRig;
    /** The tree's own page helper, so that its page runs its own SDK (the client's part of a capture). */
    capture: typeof captureInBrowser;
    runs: Record<Stage, number>[];
    serverRuns: Record<(typeof SERVER_STAGES)[number], number>[];
    outcomes: Record<string, number>;
  }[] = [];
  try {
    trees.push({
      name: 'this',
      rig: await startCaptureRig({ env, createExtractor: shared, startSidecar }),
      capture: captureInBrowser,
      runs: [],
      serverRuns: [],
      outcomes: {},
    });
    if (baselineDir) {
      const other = (await import(`${baselineDir}/test/support/capture-rig.ts`)) as {
        startCaptureRig: typeof startCaptureRig;
        captureInBrowser: typeof captureInBrowser;
      };
      trees.push({
        name: 'baseline',
        // The baseline's own rig may not know startSidecar (before it existed: in this process, whatever asked).
        // Its own sidecar too (its decoders), in its own process where this tree's is.
        rig: await other.startCaptureRig({
          env,
          createExtractor: shared,
          startSidecar: startSidecar && (await import(`${baselineDir}/bench/capture-sidecar.ts`)).startChildSidecar,
        } as never),
        capture: other.captureInBrowser,
        runs: [],
        serverRuns: [],
        outcomes: {},
      });
    }
    const params = { kind: 'FV', framesPerSecond: fps, livenessFrames };
    // Each tree enrols the person by a capture first (models warm, the subject there), untimed.
    for (const tree of trees) {
      const enrol = await tree.capture(tree.rig, await clip(tree.rig, 'enrol', ENROL_PHOTO, { seconds: 3 }), {
        ...params,
        purpose: 'ENROLL',
        subjectId: 'stages-franck',
      });
      if (enrol.result?.status !== 'SUCCESS')
        throw new Error(`${tree.name}: the enrolling capture ended ${enrol.state} ${enrol.result?.status ?? ''}`);
    }
    const clips = await Promise.all(VERIFY_PHOTOS.map((p, i) => clip(trees[0]!.rig, `verify-${i}`, p, { seconds: 3 })));
    for (let i = 0; i < captures; i++) {
      // A and B alternate, the order swapped every round, so neither always runs first after a pause.
      const order = i % 2 === 0 ? trees : [...trees].reverse();
      for (const tree of order) {
        const c = await tree.capture(
          tree.rig,
          clips[i % clips.length]!,
          { ...params, purpose: 'VERIFY', subjectId: 'stages-franck' },
          undefined,
          undefined,
          { timing: true },
        );
        const status = c.result?.status ?? c.state;
        tree.outcomes[status] = (tree.outcomes[status] ?? 0) + 1;
        tree.runs.push(stagesOf(c));
        tree.serverRuns.push(serverStagesOf(c));
        process.stderr.write(`${tree.name} #${i + 1}: ${status} ${JSON.stringify(stagesOf(c))}\n`);
        if (trace) process.stderr.write(`  connect: ${JSON.stringify(takeTraces())}\n`);
      }
    }
    const summaries = Object.fromEntries(
      trees.map((t) => [
        t.name,
        {
          outcomes: t.outcomes,
          stagesMs: summarise(t.runs),
          fromStartedMs: Object.fromEntries(
            SERVER_STAGES.map((s) => {
              const xs = t.serverRuns.map((r) => r[s]).filter(Number.isFinite);
              return [s, { median: Math.round(pct(xs, 50)), p90: Math.round(pct(xs, 90)), n: xs.length }];
            }),
          ),
        },
      ]),
    );
    const ratio = (stage: Stage) => {
      const [a, b] = trees.map((t) => pct(t.runs.map((r) => r[stage]).filter(Number.isFinite), 50));
      return b ? Number((a! / b).toFixed(2)) : null;
    };
    return {
      host: {
        cpus: availableParallelism(),
        workers,
        backend,
        sidecar: sidecarMode,
        mediaPath: trees[0]!.rig.net.describe,
        loadAverageAtStart: loadAtStart,
        loadAverageAtEnd: loadavg().map((l) => Number(l.toFixed(2))),
      },
      params: { ...params, purpose: 'VERIFY', captures, clip: '640x480 Y4M at 10 fps, a still photo, no noise' },
      stages: 'ms from the page sending connect; page marks and the service events on one clock',
      ...summaries,
      ...(trees.length > 1 ? { medianRatioThisToBaseline: Object.fromEntries(STAGES.map((s) => [s, ratio(s)])) } : {}),
    };
  } finally {
    for (const tree of trees.reverse()) await tree.rig.close().catch(() => {});
    await pool.close();
  }
}
