// npm run bench -- capture --send 6 [--baseline DIR] [--seconds 12] [--fps 5] [--workers N] [--counts]
// What a capture's media costs while it streams, the client's part included: each capture is a Chromium whose
// fake camera plays a moving test pattern (640x480, 10 fps: a still photo costs the encoder next to nothing),
// running the SDK's captureWithGateway through Janus to the sidecar's decoder, for `--seconds` (a CHECK that
// finds no face and ends TIMEOUT: the frames are analysed as usual, the detector alone). From the 4th second
// to the end it samples the CPU of the browser's processes and of the decoders (ffmpeg); with --counts the page
// also counts the camera's frames and those the sender encoded. With --baseline DIR (another checkout) its service, sidecar
// and SDK run beside this tree's and the captures alternate, so both see the same load; CPU used on a loaded
// machine is what the processes got, so the frames decoded a second say whether each side kept up.
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { captureInBrowser, clip, startCaptureRig, type CaptureRig } from '../test/support/capture-rig.js';
import { startChildSidecar } from './capture-sidecar.js';
import { startBenchPool } from './shared-pool.js';

const TICKS_PER_SECOND = 100;

function option(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : NaN;
};
const round = (n: number, digits = 3) => Number(n.toFixed(digits));

/** CPU ticks of this process's descendants named like a browser or ffmpeg, by pid (a whole scan of /proc). */
function descendantTicks(): Map<number, { group: 'browsers' | 'decoders'; ticks: number }> {
  const parent = new Map<number, number>();
  const info = new Map<number, { comm: string; ticks: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const f = stat.slice(close + 2).split(' ');
      parent.set(Number(entry), Number(f[1]));
      info.set(Number(entry), { comm: stat.slice(stat.indexOf('(') + 1, close), ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      // ended meanwhile
    }
  }
  const out = new Map<number, { group: 'browsers' | 'decoders'; ticks: number }>();
  for (const [pid, { comm, ticks }] of info) {
    const group = comm === 'ffmpeg' ? 'decoders' : /chrom/i.test(comm) ? 'browsers' : null;
    if (!group) continue;
    let p: number | undefined = pid;
    while (p && p !== process.pid) p = parent.get(p);
    if (p === process.pid) out.set(pid, { group, ticks });
  }
  return out;
}

/** Cores used by the browsers and the decoders from `fromMs` after the start until stopped (samples every 0.5 s). */
function sampleCores(fromMs: number) {
  const first = new Map<number, number>();
  const last = new Map<number, { group: 'browsers' | 'decoders'; ticks: number }>();
  let startedAt = 0;
  let lastAt = 0;
  const sample = () => {
    const now = Date.now();
    const ticks = descendantTicks();
    if (!startedAt) {
      startedAt = now;
      for (const [pid, t] of ticks) first.set(pid, t.ticks);
    }
    for (const [pid, t] of ticks) last.set(pid, t);
    lastAt = now;
  };
  let timer: ReturnType<typeof setInterval> | undefined;
  const delay = setTimeout(() => {
    sample();
    timer = setInterval(sample, 500);
  }, fromMs);
  return () => {
    clearTimeout(delay);
    clearInterval(timer);
    const seconds = (lastAt - startedAt) / 1000;
    const cores = { browsers: 0, decoders: 0 };
    for (const [pid, { group, ticks }] of last) cores[group] += ticks - (first.get(pid) ?? 0);
    return {
      seconds,
      browsers: cores.browsers / TICKS_PER_SECOND / seconds,
      decoders: cores.decoders / TICKS_PER_SECOND / seconds,
    };
  };
}

export async function run(args: string[]) {
  const rounds = Number(option(args, 'send', '6'));
  const baselineDir = option(args, 'baseline', '');
  const seconds = Number(option(args, 'seconds', '12'));
  // The page's counts come from its statistics read every 20 ms (capture-timing.ts), which cost the browser CPU.
  const counts = args.includes('--counts');
  const fps = Number(option(args, 'fps', '5'));
  const workers = Number(option(args, 'workers', String(availableParallelism())));
  // One pool for both services (the baseline's too): the same analysis cost on either side.
  const { pool, shared, backend } = await startBenchPool(workers);
  const env = { BIMS_CAPTURE_LINGER_SECONDS: '2', BIMS_CHECK_ANSWERS: 'off' };
  const loadAtStart = loadavg().map((l) => round(l, 2));
  type Run = Record<string, number>;
  const trees: { name: string; rig: CaptureRig; capture: typeof captureInBrowser; runs: Run[] }[] = [];
  try {
    trees.push({
      name: 'this',
      rig: await startCaptureRig({ env, createExtractor: shared, startSidecar: startChildSidecar }),
      capture: captureInBrowser,
      runs: [],
    });
    if (baselineDir) {
      const other = (await import(`${baselineDir}/test/support/capture-rig.ts`)) as {
        startCaptureRig: typeof startCaptureRig;
        captureInBrowser: typeof captureInBrowser;
      };
      const sidecar = (await import(`${baselineDir}/bench/capture-sidecar.ts`)) as {
        startChildSidecar: typeof startChildSidecar;
      };
      trees.push({
        name: 'baseline',
        rig: await other.startCaptureRig({ env, createExtractor: shared, startSidecar: sidecar.startChildSidecar }),
        capture: other.captureInBrowser,
        runs: [],
      });
    }
    const pattern = await clip(trees[0]!.rig, 'pattern', undefined, { seconds: 3 });
    const params = { kind: 'FV', purpose: 'CHECK', framesPerSecond: fps, timeoutSeconds: seconds };
    for (let i = 0; i < rounds; i++) {
      const order = i % 2 === 0 ? trees : [...trees].reverse();
      for (const tree of order) {
        const stop = sampleCores(4000);
        const c = await tree.capture(tree.rig, pattern, params, undefined, undefined, { timing: counts });
        const cpu = stop();
        // Without --counts, or from a baseline whose page timing predates the sender's counts: NaN.
        const video = c.timing?.video?.sinceFirstPacket ?? { framesEncoded: NaN, cameraFrames: NaN };
        const streamed = (Number(c.metrics.resultMs) - Number(c.metrics.firstFrameMs)) / 1000;
        const r: Run = {
          browserCores: round(cpu.browsers),
          decoderCores: round(cpu.decoders),
          sampledSeconds: round(cpu.seconds, 1),
          encodedShareOfCamera: round(video.framesEncoded / video.cameraFrames),
          framesDecodedPerSecond: round(Number(c.metrics.framesDecoded) / streamed, 2),
          framesAnalysedPerSecond: round(Number(c.metrics.framesAnalysed) / streamed, 2),
        };
        tree.runs.push(r);
        process.stderr.write(`${tree.name} #${i + 1}: ${c.result?.status ?? c.state} ${JSON.stringify(r)}\n`);
      }
    }
    const summary = (runs: Run[]) =>
      Object.fromEntries(
        Object.keys(runs[0] ?? {}).map((k) => [k, round(median(runs.map((r) => r[k]!).filter(Number.isFinite)))]),
      );
    return {
      host: {
        cpus: availableParallelism(),
        workers,
        backend,
        mediaPath: trees[0]!.rig.net.describe,
        loadAverageAtStart: loadAtStart,
        loadAverageAtEnd: loadavg().map((l) => round(l, 2)),
      },
      params: { ...params, rounds, counts, clip: '640x480 Y4M at 10 fps, a moving test pattern (no face)' },
      medians: Object.fromEntries(trees.map((t) => [t.name, summary(t.runs)])),
      runs: Object.fromEntries(trees.map((t) => [t.name, t.runs])),
    };
  } finally {
    for (const tree of trees.reverse()) await tree.rig.close().catch(() => {});
    await pool.close();
  }
}
