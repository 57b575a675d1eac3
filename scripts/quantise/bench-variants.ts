// npx tsx scripts/quantise/bench-variants.ts [--models fr_detect,...] [--variants a,b] [--rounds N] [--per-model N]
// Speed of onnxruntime-web session options and load-time graph rewrites of the face models against today's
// wasm session (and onnxruntime-node), one thread each, on the captured inputs of scripts/quantise-models.ts
// (.cache/int8), every model flushed as the runners load it: the variants alternate input by input (order
// rotated) in one run, CPU ms per inference (process user + system). Each variant's outputs are compared with
// the baseline's on every input: bit-identical count and the largest absolute difference.
//   --baseline native --variants nativeSplitPRelu   compares against onnxruntime-node instead.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-web';
import type * as OrtCommon from 'onnxruntime-common';
import type { FaceModelId } from '../../src/biometrics/face/runner.js';
import { MODELS_DIR } from '../../src/extraction/node-models.js';
import { flushSubnormalWeights } from '../../src/extraction/onnx-flush-subnormals.js';
import { configureEnv } from '../../src/extraction/ort-web-runner.js';
import { toolRequire } from '../tool.mjs';
import { CAPTURE_DIR } from '../quantise-models.js';
import { loadInputs } from './calibration.js';
import { splitPRelu } from './onnx-prelu.js';
import { NATIVE_SESSION_OPTIONS } from '../../src/extraction/native-session-options.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** A way to run a model: which runtime, session options beyond the defaults, and a rewrite of its bytes. */
export interface Variant {
  runtime: 'wasm' | 'native';
  options?: Record<string, unknown>;
  rewrite?: (model: Uint8Array) => Uint8Array;
}

const WEB_DEFAULTS = { executionProviders: ['wasm'], graphOptimizationLevel: 'all', logSeverityLevel: 3 };

/** The variants this script knows; `wasm` (today's runner) is the default baseline of the comparisons. */
export const VARIANTS: Record<string, Variant> = {
  wasm: { runtime: 'wasm' },
  native: { runtime: 'native' },
  wasmArena: { runtime: 'wasm', options: { enableCpuMemArena: true } },
  wasmMemPattern: { runtime: 'wasm', options: { enableMemPattern: true } },
  wasmArenaMemPattern: { runtime: 'wasm', options: { enableCpuMemArena: true, enableMemPattern: true } },
  wasmExtended: { runtime: 'wasm', options: { graphOptimizationLevel: 'extended' } },
  wasmBasic: { runtime: 'wasm', options: { graphOptimizationLevel: 'basic' } },
  wasmParallel: { runtime: 'wasm', options: { executionMode: 'parallel' } },
  nativeNoArena: { runtime: 'native', options: { enableCpuMemArena: false, enableMemPattern: false } },
  nativeExtended: { runtime: 'native', options: { graphOptimizationLevel: 'extended' } },
  nativeSplitPRelu: { runtime: 'native', rewrite: splitPRelu },
  wasmSplitPRelu: { runtime: 'wasm', rewrite: splitPRelu },
};

type Session = {
  run(feeds: Record<string, unknown>): Promise<Record<string, { data: unknown; dispose?: () => void }>>;
  release(): Promise<void>;
};

async function main(): Promise<void> {
  configureEnv({});
  const ortNode = toolRequire('bench')('onnxruntime-node') as typeof OrtCommon;
  const rounds = Number(arg('rounds') ?? 4),
    perModel = Number(arg('per-model') ?? 8);
  // --baseline NAME: the variant the others are compared with (outputs and time), default today's wasm session.
  const first = arg('baseline') ?? 'wasm';
  const names = [
    first,
    ...(
      arg('variants')?.split(',') ?? ['native', 'wasmArena', 'wasmMemPattern', 'wasmArenaMemPattern', 'wasmExtended']
    ).filter((v) => v !== first),
  ];
  for (const n of names)
    if (!VARIANTS[n]) throw new Error(`unknown variant ${n} (known: ${Object.keys(VARIANTS).join(', ')})`);
  for (const id of (arg('models')?.split(',') ?? [
    'fr_detect',
    'fr_landmark',
    'fr_feature',
    'fr_liveness',
    'fr_pose',
  ]) as FaceModelId[]) {
    const inputs = (loadInputs(CAPTURE_DIR, id) ?? []).slice(0, perModel);
    if (!inputs.length)
      throw new Error(`no captured inputs for ${id} in ${CAPTURE_DIR}: run npm run quantise-models first`);
    const model = flushSubnormalWeights(new Uint8Array(readFileSync(join(MODELS_DIR, `${id}.onnx`))));
    const sessions: [string, Session, typeof ort.Tensor][] = [];
    for (const n of names) {
      const v = VARIANTS[n]!;
      const bytes = v.rewrite ? v.rewrite(model) : model;
      sessions.push(
        v.runtime === 'wasm'
          ? [
              n,
              (await ort.InferenceSession.create(bytes, {
                ...WEB_DEFAULTS,
                ...v.options,
              } as ort.InferenceSession.SessionOptions)) as unknown as Session,
              ort.Tensor,
            ]
          : [
              n,
              (await ortNode.InferenceSession.create(bytes, {
                ...NATIVE_SESSION_OPTIONS,
                ...v.options,
              } as OrtCommon.InferenceSession.SessionOptions)) as unknown as Session,
              ortNode.Tensor as unknown as typeof ort.Tensor,
            ],
      );
    }
    const run = async (s: Session, T: typeof ort.Tensor, x: (typeof inputs)[number]) => {
      const o = await s.run({ input: new T('float32', x.data, x.dims) });
      const out = Object.fromEntries(Object.entries(o).map(([k, v]) => [k, new Float32Array(v.data as Float32Array)]));
      for (const v of Object.values(o)) v.dispose?.();
      return out;
    };
    // Warm-up round: outputs of every variant against the baseline's.
    const diff = new Map(names.map((n) => [n, { identical: 0, maxAbs: 0 }]));
    for (const x of inputs) {
      const base = await run(sessions[0]![1], sessions[0]![2], x);
      for (const [n, s, T] of sessions.slice(1)) {
        const out = await run(s, T, x);
        let same = true;
        const d = diff.get(n)!;
        for (const [k, a] of Object.entries(base)) {
          const b = out[k]!;
          for (let i = 0; i < a.length; i++) {
            if (a[i] !== b[i]) same = false;
            d.maxAbs = Math.max(d.maxAbs, Math.abs(a[i]! - b[i]!));
          }
        }
        if (same) d.identical++;
      }
    }
    const cpu = new Map(names.map((n) => [n, 0]));
    const loads: number[] = [];
    for (let r = 0; r < rounds; r++) {
      loads.push(Number(loadavg()[0]!.toFixed(1)));
      for (const [k, x] of inputs.entries()) {
        for (let i = 0; i < sessions.length; i++) {
          const [n, s, T] = sessions[(i + k + r) % sessions.length]!;
          const c0 = process.cpuUsage();
          await run(s, T, x);
          const c = process.cpuUsage(c0);
          cpu.set(n, cpu.get(n)! + (c.user + c.system) / 1000);
        }
      }
    }
    for (const [, s] of sessions) await s.release();
    const ms = Object.fromEntries([...cpu].map(([n, c]) => [n, Number((c / rounds / inputs.length).toFixed(2))]));
    const rel = Object.fromEntries(names.slice(1).map((n) => [n, Number((ms[n]! / ms[first]!).toFixed(3))]));
    const outputs = Object.fromEntries(
      names
        .slice(1)
        .map((n) => [
          n,
          `${diff.get(n)!.identical}/${inputs.length} identical, max |diff| ${diff.get(n)!.maxAbs.toPrecision(3)}`,
        ]),
    );
    console.log(
      id,
      JSON.stringify({
        cpuMs: ms,
        [`over_${first}`]: rel,
        ...(ms.native && ms.wasm ? { wasmOverNative: Number((ms.wasm / ms.native).toFixed(2)) } : {}),
        outputs,
        load1: loads,
      }),
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
