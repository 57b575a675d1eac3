// npm run bench -- api-stages [--faces N] [--rounds N] [--backend native|wasm]
// Where one enrolment's extraction CPU goes, stage by stage: the worker's pipeline as `analyseImage` runs it
// for an enrolment (checks, no age/gender, no liveness) inline on one thread, over the api bench's 512x512
// portraits. Process CPU (this thread, V8's helpers, the runtime's kernels) around each step, summed over the
// faces: CPU hardly moves with the machine's other load, unlike wall time. The steps are the pipeline's own
// functions called in its order (pipeline.ts, attributes.ts), so the stages add up to about one analysis.
import { availableParallelism, loadavg } from 'node:os';
import { benchRunner, cpu, extractionBackend, faceStages } from './face-stages.js';
import { portraits } from './api.js';

/** An enrolment's measures: checks, no age/gender, no liveness. */
const ENROLMENT = { checks: true, attributes: false, liveness: false };

const option = (args: string[], name: string, fallback: number) =>
  args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : fallback;

export async function run(args: string[]) {
  const faces = option(args, 'faces', 60);
  const rounds = option(args, 'rounds', 2);
  const backend = extractionBackend(args.includes('--backend') ? args[args.indexOf('--backend') + 1] : 'native');
  const runner = await benchRunner(backend);
  const photos = await portraits(faces);
  const { spent, analyse, totals } = faceStages(runner);
  const enrolmentAnalysis = (bytes: Uint8Array) => analyse(bytes, ENROLMENT);
  for (const p of photos) await enrolmentAnalysis(p); // warm-up: V8's optimising tier, the sessions' first runs
  spent.clear();
  const loadBefore = loadavg().map((x) => Number(x.toFixed(1)));
  const c0 = cpu();
  for (let r = 0; r < rounds; r++) for (const p of photos) await enrolmentAnalysis(p);
  const n = photos.length * rounds;
  const total = cpu() - c0;
  const apart = totals();
  const stages = Object.fromEntries(
    [...apart].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Number((v / n).toFixed(2))]),
  );
  const modelsMs = [...apart].filter(([k]) => k.startsWith('model ')).reduce((s, [, v]) => s + v, 0) / n;
  const result = {
    benchmark: 'api-stages',
    backend,
    faces: n,
    machine: {
      cores: availableParallelism(),
      loadAverageBefore: loadBefore,
      loadAverageAfter: loadavg().map((x) => Number(x.toFixed(1))),
    },
    cpuMsPerFace: Number((total / n).toFixed(2)),
    modelsMsPerFace: Number(modelsMs.toFixed(2)),
    otherMsPerFace: Number((total / n - modelsMs).toFixed(2)),
    stagesMsPerFace: stages,
  };
  await runner.release();
  return result;
}
