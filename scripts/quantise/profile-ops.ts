// npx tsx scripts/quantise/profile-ops.ts [--models fr_detect,fr_pose] [--runs N] [--top N] [--json OUT]
// Where each face model spends its time, per operator, in onnxruntime-web (wasm) and onnxruntime-node (native),
// one thread each, the models flushed as the runners load them, on the captured inputs of scripts/quantise-models.ts
// (.cache/int8; mid-grey inputs without them). Both runtimes profile with `enableProfiling`: onnxruntime-node writes its trace to a file,
// onnxruntime-web's wasm build prints it on stdout (read from a child process). The first run of each session
// is left out (kernel set-up). Prints, per model, the op types by share of the wasm time with the wasm / native
// ratio of each, then the slowest nodes with their shapes.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-web';
import type * as OrtCommon from 'onnxruntime-common';
import type { FaceModelId } from '../../src/biometrics/face/runner.js';
import { MODELS_DIR } from '../../src/extraction/node-models.js';
import { flushSubnormalWeights } from '../../src/extraction/onnx-flush-subnormals.js';
import { configureEnv } from '../../src/extraction/ort-web-runner.js';
import { toolRequire } from '../tool.mjs';
import { CAPTURE_DIR } from '../quantise-models.js';
import { loadInputs } from './calibration.js';
import { NATIVE_SESSION_OPTIONS } from '../../src/extraction/native-session-options.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** One kernel event of an onnxruntime profile (Chrome trace format). */
interface KernelEvent {
  name: string;
  dur: number;
  args: {
    op_name: string;
    input_type_shape: Record<string, number[]>[];
    output_type_shape: Record<string, number[]>[];
  };
}
/** One kind of node (same operator class and shapes), its time per inference summed over its nodes. */
export interface NodeTime {
  kind: string;
  shapes: string;
  nodes: number;
  us: number;
}

const dims = (x: Record<string, number[]> | undefined) => (x ? Object.values(x)[0]! : []);

/**
 * The class of a node that both runtimes share whatever they fused or renamed: convolutions (Conv, FusedConv,
 * onnxruntime-node's NCHWc Conv) as 'Conv 1x1', 'Conv dw3x3/s2' (depthwise), 'Conv 3x3' ...; others by op type.
 */
export function kindOf(op: string, inputs: number[][], output: number[]): string {
  if (op !== 'Conv' && op !== 'FusedConv') return op;
  const [x, w] = [inputs[0] ?? [], inputs[1] ?? []];
  const k = `${w[2]}x${w[3]}`,
    stride = x[2] && output[2] ? Math.round(x[2] / output[2]) : 1;
  const depthwise = w[1] === 1 && x[1] === w[0] && w[0]! > 1;
  return `Conv ${depthwise ? 'dw' : ''}${k}${stride > 1 ? `/s${stride}` : ''}`;
}

/**
 * Time per inference of each kind of node, from a profile's kernel events, the first `skipRuns` runs left out.
 * Each node counts with its shortest run: on a loaded machine a kernel's wall time is its own time plus
 * whatever preempted it, and the shortest of several runs is the closest to its own.
 */
export function kernelTimes(
  events: readonly { cat: string; name: string; dur: number; args?: unknown }[],
  skipRuns: number,
): Map<string, NodeTime> {
  const runs = events.filter((e) => e.cat === 'Session' && e.name === 'model_run').length;
  const kernels = events.filter((e) => e.cat === 'Node' && e.name.endsWith('_kernel_time')) as unknown as KernelEvent[];
  const perRun = kernels.length / runs;
  if (!Number.isInteger(perRun)) throw new Error('runs of different lengths in the profile');
  const best = new Map<number, number>();
  kernels
    .slice(skipRuns * perRun)
    .forEach((e, i) => best.set(i % perRun, Math.min(best.get(i % perRun) ?? Infinity, e.dur)));
  const times = new Map<string, NodeTime>();
  for (const [i, us] of best) {
    const e = kernels[i]!;
    const ins = e.args.input_type_shape.map(dims),
      out = dims(e.args.output_type_shape[0]);
    const kind = kindOf(e.args.op_name, ins, out);
    // Operands a fusion adds (bias, the residual of a Conv+Add) are left out of the shapes: both runtimes agree.
    const shapes = `${(kind.startsWith('Conv') ? ins.slice(0, 2) : ins).map((d) => d.join('x')).join(',')} -> ${out.join('x')}`;
    if (e.args.op_name.startsWith('Reorder')) continue; // NCHWc layout changes, counted apart below
    const key = `${kind} ${shapes}`;
    const t = times.get(key) ?? { kind, shapes, nodes: 0, us: 0 };
    t.nodes++;
    t.us += us;
    times.set(key, t);
  }
  // onnxruntime-node's NCHWc layout conversions: one line, they have no counterpart in wasm.
  let reorder = 0,
    n = 0;
  for (const [i, us] of best)
    if (kernels[i]!.args.op_name.startsWith('Reorder')) {
      reorder += us;
      n++;
    }
  if (n) times.set('Reorder', { kind: 'Reorder (NCHWc)', shapes: '', nodes: n, us: reorder });
  return times;
}

/** Parses the JSON array onnxruntime-web printed (possibly between other lines). */
function parseTrace(text: string): { cat: string; name: string; dur: number; args?: unknown }[] {
  const start = text.indexOf('[\n{"cat"');
  const end = text.indexOf('\n]', start);
  if (start < 0 || end < 0) throw new Error('no profile in the wasm output');
  return JSON.parse(text.slice(start, end + 2));
}

type Feeds = { data: Float32Array; dims: readonly number[] }[];

/**
 * Profiles the model in onnxruntime-web in a child process: the wasm build prints its trace on the process's
 * standard output from the wasm side (neither console.log nor process.stdout.write see it), so the child's
 * stdout is read whole.
 */
export function profileWasm(id: FaceModelId, runs: number, opts: Record<string, unknown>): Map<string, NodeTime> {
  const child = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      '--wasm-child',
      id,
      '--runs',
      String(runs),
      '--web-options',
      JSON.stringify(opts),
    ],
    { encoding: 'utf8', maxBuffer: 1 << 30 },
  );
  if (child.status !== 0) throw new Error(`wasm profile of ${id} failed: ${child.stderr}`);
  return kernelTimes(parseTrace(child.stdout), 1);
}

/** The child's part: run the model with profiling on; the wasm build prints the trace when it ends. */
async function wasmChild(id: FaceModelId, runs: number, opts: Record<string, unknown>): Promise<void> {
  configureEnv({});
  const s = await ort.InferenceSession.create(modelBytes(id), {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
    ...opts,
    enableProfiling: true,
  });
  const inputs = capturedInputs(id, runs);
  for (const x of [inputs[0]!, ...inputs])
    for (const v of Object.values(await s.run({ input: new ort.Tensor('float32', x.data, x.dims) }))) v.dispose();
  s.endProfiling();
  await s.release();
}

/** The model as the runners load it (subnormal weights flushed). */
const modelBytes = (id: FaceModelId) =>
  flushSubnormalWeights(new Uint8Array(readFileSync(join(MODELS_DIR, `${id}.onnx`))));

/** Static input shape of each model (the pipeline's), for runs without captured inputs. */
const INPUT_DIMS: Record<FaceModelId, number[]> = {
  fr_detect: [1, 3, 240, 320],
  fr_landmark: [1, 1, 64, 64],
  fr_feature: [1, 3, 112, 112],
  fr_liveness: [1, 3, 128, 128],
  fr_eye: [1, 1, 24, 24],
  fr_pose: [1, 3, 224, 224],
  fr_age: [1, 3, 64, 64],
  fr_gender: [1, 3, 64, 64],
};

/**
 * `runs` inputs of the model: the captured ones (repeating), or mid-grey ones when none were captured (the
 * kernels' times hardly depend on the values once subnormal weights are flushed).
 */
function capturedInputs(id: FaceModelId, runs: number): Feeds {
  const dims = INPUT_DIMS[id];
  const all = loadInputs(CAPTURE_DIR, id) ?? [
    { data: new Float32Array(dims.reduce((a, b) => a * b, 1)).fill(0.5), dims },
  ];
  return Array.from({ length: runs }, (_, i) => all[i % all.length]!);
}

async function profileNative(
  ortNode: typeof OrtCommon,
  model: Uint8Array,
  inputs: Feeds,
  opts: Record<string, unknown>,
): Promise<Map<string, NodeTime>> {
  const prefix = join('/tmp', `bims-profile-${process.pid}`);
  const s = await ortNode.InferenceSession.create(model, {
    ...NATIVE_SESSION_OPTIONS,
    ...opts,
    enableProfiling: true,
    profileFilePrefix: prefix,
  });
  for (const x of [inputs[0]!, ...inputs]) await s.run({ input: new ortNode.Tensor('float32', x.data, x.dims) });
  // onnxruntime-node writes <prefix>_<date>.json and does not say which: the newest such file.
  await (s as unknown as { endProfiling(): Promise<void> }).endProfiling();
  await s.release();
  const { readdirSync, statSync } = await import('node:fs');
  const file = readdirSync('/tmp')
    .filter((f) => f.startsWith(`bims-profile-${process.pid}`))
    .map((f) => join('/tmp', f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]!;
  const events = JSON.parse(readFileSync(file, 'utf8'));
  rmSync(file);
  return kernelTimes(events, 1);
}

/** Per kind of node: wasm and native ms per inference, their ratio and the share of the model's wasm time. */
export function byKind(
  wasm: Map<string, NodeTime>,
  native: Map<string, NodeTime>,
): { kind: string; wasmMs: number; nativeMs: number; ratio: number; share: number }[] {
  const total = [...wasm.values()].reduce((a, t) => a + t.us, 0);
  const kinds = new Map<string, { w: number; n: number }>();
  for (const [m, side] of [
    [wasm, 'w'],
    [native, 'n'],
  ] as const) {
    for (const t of m.values()) {
      const o = kinds.get(t.kind) ?? { w: 0, n: 0 };
      o[side] += t.us;
      kinds.set(t.kind, o);
    }
  }
  return [...kinds]
    .map(([kind, o]) => ({
      kind,
      wasmMs: +(o.w / 1000).toFixed(3),
      nativeMs: +(o.n / 1000).toFixed(3),
      ratio: +(o.w / Math.max(o.n, 1)).toFixed(2),
      share: +(o.w / total).toFixed(3),
    }))
    .sort((a, b) => b.wasmMs - a.wasmMs);
}

async function main(): Promise<void> {
  const ortNode = toolRequire('bench')('onnxruntime-node') as typeof OrtCommon;
  const runs = Number(arg('runs') ?? 8),
    top = Number(arg('top') ?? 12);
  const webOpts = JSON.parse(arg('web-options') ?? '{}'),
    nativeOpts = JSON.parse(arg('native-options') ?? '{}');
  const result: Record<string, unknown> = {};
  for (const id of (arg('models')?.split(',') ?? [
    'fr_detect',
    'fr_landmark',
    'fr_feature',
    'fr_liveness',
    'fr_pose',
  ]) as FaceModelId[]) {
    const inputs = capturedInputs(id, runs);
    const wasm = profileWasm(id, runs, webOpts);
    const native = await profileNative(ortNode, modelBytes(id), inputs, nativeOpts);
    const sum = (m: Map<string, NodeTime>) => +([...m.values()].reduce((a, t) => a + t.us, 0) / 1000).toFixed(2);
    const kinds = byKind(wasm, native);
    const nodes = [...wasm]
      .sort((a, b) => b[1].us - a[1].us)
      .slice(0, top)
      .map(([key, t]) => {
        const n = native.get(key);
        return {
          kind: t.kind,
          shapes: t.shapes,
          nodes: t.nodes,
          wasmMs: +(t.us / 1000).toFixed(3),
          nativeMs: n ? +(n.us / 1000).toFixed(3) : null,
        };
      });
    result[id] = {
      kernelMsWasm: sum(wasm),
      kernelMsNative: sum(native),
      ratio: +(sum(wasm) / sum(native)).toFixed(2),
      kinds,
      nodes,
    };
    console.log(
      `\n== ${id}: kernels ${sum(wasm)} ms wasm, ${sum(native)} ms native (${(sum(wasm) / sum(native)).toFixed(2)}x), fastest of ${runs} runs per node`,
    );
    for (const o of kinds)
      console.log(
        `  ${o.kind.padEnd(22)} wasm ${o.wasmMs.toFixed(3).padStart(8)} native ${o.nativeMs.toFixed(3).padStart(8)}  x${String(o.ratio).padEnd(6)} ${(o.share * 100).toFixed(1)}% of wasm`,
      );
    for (const n of nodes)
      console.log(
        `    ${n.kind.padEnd(16)} x${n.nodes} ${String(n.wasmMs).padStart(7)} / ${String(n.nativeMs).padStart(7)}  ${n.shapes}`,
      );
  }
  const json = arg('json');
  if (json) writeFileSync(json, JSON.stringify(result, null, 2) + '\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const child = arg('wasm-child');
  if (child) await wasmChild(child as FaceModelId, Number(arg('runs') ?? 8), JSON.parse(arg('web-options') ?? '{}'));
  else await main();
}
