// npx tsx scripts/quantise/bench-subnormals.ts [--rounds N] [--per-model N]
// The face models with their subnormal weights flushed to zero (flushSubnormalWeights) against the fetched
// ones, float, one thread, onnxruntime-web wasm and onnxruntime-node, alternating input by input on the
// captured inputs of scripts/quantise-models.ts: CPU ms per inference and how far the outputs moved.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-web';
import type * as OrtCommon from 'onnxruntime-common';
import type { FaceModelId } from '../../src/biometrics/face/runner.js';
import { MODELS_DIR } from '../../src/extraction/node-models.js';
import { configureEnv } from '../../src/extraction/ort-web-runner.js';
import { toolRequire } from '../tool.mjs';
import { CAPTURE_DIR } from '../quantise-models.js';
import { loadInputs } from './calibration.js';
import { flushSubnormalWeights } from './onnx-int8.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const rounds = Number(arg('rounds') ?? 3),
  perModel = Number(arg('per-model') ?? 6);
configureEnv({});
const ortNode = toolRequire('bench')('onnxruntime-node') as typeof OrtCommon;
type Session = {
  run(feeds: Record<string, unknown>): Promise<Record<string, { data: unknown; dispose?: () => void }>>;
};
for (const id of (arg('models')?.split(',') ?? ['fr_landmark', 'fr_feature', 'fr_age', 'fr_gender']) as FaceModelId[]) {
  const float = new Uint8Array(readFileSync(join(MODELS_DIR, `${id}.onnx`)));
  const { model: flushed, flushed: n } = flushSubnormalWeights(float);
  const inputs = (loadInputs(CAPTURE_DIR, id) ?? []).slice(0, perModel);
  const web = (b: Uint8Array) =>
    ort.InferenceSession.create(b, {
      executionProviders: ['wasm'],
      graphOptimizationLevel: 'all',
      logSeverityLevel: 3,
    }) as unknown as Promise<Session>;
  const nat = (b: Uint8Array) =>
    ortNode.InferenceSession.create(b, {
      executionProviders: ['cpu'],
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
      logSeverityLevel: 3,
    }) as unknown as Promise<Session>;
  const variants: [string, Session, unknown][] = [
    ['wasmFloat', await web(float), ort.Tensor],
    ['wasmFlushed', await web(flushed), ort.Tensor],
    ['nativeFloat', await nat(float), ortNode.Tensor],
    ['nativeFlushed', await nat(flushed), ortNode.Tensor],
  ];
  const cpu = new Map(variants.map(([v]) => [v, 0]));
  let maxDiff = 0,
    identical = 0;
  for (let r = 0; r <= rounds; r++) {
    for (const [k, x] of inputs.entries()) {
      const outs = new Map<string, Float32Array>();
      for (let i = 0; i < variants.length; i++) {
        const [name, s, T] = variants[(i + k + r) % variants.length]!;
        const c0 = process.cpuUsage();
        const o = await s.run({ input: new (T as typeof ort.Tensor)('float32', x.data, x.dims) });
        const c = process.cpuUsage(c0);
        if (r) cpu.set(name, cpu.get(name)! + (c.user + c.system) / 1000);
        outs.set(name, new Float32Array(Object.values(o)[0]!.data as Float32Array));
      }
      if (r === 0) {
        const [a, b] = [outs.get('wasmFloat')!, outs.get('wasmFlushed')!];
        let same = true;
        for (let i = 0; i < a.length; i++) {
          maxDiff = Math.max(maxDiff, Math.abs(a[i]! - b[i]!));
          if (a[i] !== b[i]) same = false;
        }
        if (same) identical++;
      }
    }
  }
  const ms = Object.fromEntries([...cpu].map(([v, c]) => [v, Number((c / rounds / inputs.length).toFixed(2))]));
  console.log(
    id,
    JSON.stringify({
      subnormalWeights: n,
      cpuMs: ms,
      wasmFlushedOverNativeFlushed: Number((ms.wasmFlushed! / ms.nativeFlushed!).toFixed(3)),
      wasmOutputsBitIdentical: `${identical}/${inputs.length}`,
      maxAbsDiff: maxDiff,
      load1: Number(loadavg()[0]!.toFixed(1)),
    }),
  );
}
