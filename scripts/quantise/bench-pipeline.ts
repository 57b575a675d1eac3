// npx tsx scripts/quantise/bench-pipeline.ts [--rounds N] [--photos N] [--runners wasm,native,...]
// The whole face pipeline (analyseImage: decode, detection, landmarks, embedding, pose, eyes, liveness; no
// age/gender, as bench-int8.ts) on labelled photos with each runner, alternating photo by photo (order rotated,
// round 0 warms up), one thread each: CPU ms per photo (process user + system), split into the time inside
// each model's run() and the rest (decoding, crops, pre- and post-processing: the same code for every runner),
// and the ratio of each runner to native. The answers (boxes, scores, embeddings) of every runner are compared
// with the first one's.
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { analyseImage } from '../../src/biometrics/face/pipeline.js';
import { type ImageAnalysis } from '../../src/biometrics/face/analysis.js';
import { FACE_MODELS, type FaceModelId, type ModelRunner } from '../../src/biometrics/face/runner.js';
import { enableFastJpegNode, nodeModelLoader } from '../../src/extraction/node-models.js';
import { OrtNodeRunner } from '../../src/extraction/node-native-runner.js';
import { OrtWebRunner } from '../../src/extraction/ort-web-runner.js';
import { photosIn } from './calibration.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** Runners this bench can build (each loads the models the way the service does). */
const RUNNERS: Record<string, () => Promise<ModelRunner>> = {
  wasm: () => OrtWebRunner.create({ loadModel: nodeModelLoader(), models: FACE_MODELS }),
  native: () => OrtNodeRunner.create({ loadModel: nodeModelLoader(), models: FACE_MODELS }),
};

/** A runner that adds the CPU time spent inside each model's run() to `spent`. */
function timed(inner: ModelRunner, spent: Map<FaceModelId, number>): ModelRunner {
  return {
    async run(model, input, dims) {
      const c0 = process.cpuUsage();
      try {
        return await inner.run(model, input, dims);
      } finally {
        const c = process.cpuUsage(c0);
        spent.set(model, (spent.get(model) ?? 0) + (c.user + c.system) / 1000);
      }
    },
    release: () => inner.release(),
  };
}

/** Largest difference between two analyses of one photo: embedding cosine, box corners, detection score. */
function compare(a: ImageAnalysis, b: ImageAnalysis): { faces: boolean; cosine: number; box: number; score: number } {
  let cosine = 1,
    box = 0,
    score = 0;
  if (a.faces.length !== b.faces.length) return { faces: false, cosine: NaN, box: NaN, score: NaN };
  a.faces.forEach((f, i) => {
    const g = b.faces[i]!;
    let d = 0,
      na = 0,
      nb = 0;
    for (let k = 0; k < f.embedding.length; k++) {
      d += f.embedding[k]! * g.embedding[k]!;
      na += f.embedding[k]! ** 2;
      nb += g.embedding[k]! ** 2;
    }
    cosine = Math.min(cosine, d / Math.sqrt(na * nb));
    const r = f.rectangle,
      s = g.rectangle;
    box = Math.max(
      box,
      Math.abs(r.x - s.x),
      Math.abs(r.y - s.y),
      Math.abs(r.width - s.width),
      Math.abs(r.height - s.height),
    );
    score = Math.max(score, Math.abs(f.detectionScore - g.detectionScore));
  });
  return { faces: true, cosine, box, score };
}

async function main(): Promise<void> {
  await enableFastJpegNode();
  const rounds = Number(arg('rounds') ?? 3);
  const root = 'test/fixtures/photos/labelled';
  const photos = photosIn(readdirSync(root).map((d) => join(root, d))).slice(0, Number(arg('photos') ?? 8));
  const bytes = await Promise.all(photos.map(async (p) => new Uint8Array(await readFile(p))));
  const names = arg('runners')?.split(',') ?? ['wasm', 'native'];
  const spent = new Map(names.map((n) => [n, new Map<FaceModelId, number>()]));
  const runners: [string, ModelRunner][] = [];
  for (const n of names) {
    if (!RUNNERS[n]) throw new Error(`unknown runner ${n} (known: ${Object.keys(RUNNERS).join(', ')})`);
    runners.push([n, timed(await RUNNERS[n]!(), spent.get(n)!)]);
  }
  const cpu = new Map(names.map((n) => [n, 0]));
  const answers = new Map<string, ImageAnalysis[]>();
  const loads: number[] = [];
  for (let r = 0; r <= rounds; r++) {
    if (r) loads.push(Number(loadavg()[0]!.toFixed(1)));
    else for (const m of spent.values()) m.clear();
    for (const [k, b] of bytes.entries()) {
      for (let i = 0; i < runners.length; i++) {
        const [name, runner] = runners[(i + k + r) % runners.length]!;
        const c0 = process.cpuUsage();
        const a = await analyseImage(runner, b, { checks: true, attributes: false, liveness: true });
        const c = process.cpuUsage(c0);
        if (r) cpu.set(name, cpu.get(name)! + (c.user + c.system) / 1000);
        else answers.set(name, [...(answers.get(name) ?? []), a]);
      }
      // Round 0's model times are warm-up: dropped.
      if (r === 0 && k === bytes.length - 1) for (const m of spent.values()) m.clear();
    }
  }
  for (const [, r] of runners) await r.release();
  const per = (x: number) => Number((x / rounds / bytes.length).toFixed(1));
  const result: Record<string, unknown> = {};
  const nativeMs = cpu.has('native') ? per(cpu.get('native')!) : undefined;
  for (const n of names) {
    const models = Object.fromEntries([...spent.get(n)!].map(([m, c]) => [m, per(c)]));
    const inModels = per([...spent.get(n)!.values()].reduce((a, c) => a + c, 0));
    const first = answers.get(names[0]!)!,
      mine = answers.get(n)!;
    const diffs = mine.map((a, i) => compare(first[i]!, a));
    result[n] = {
      cpuMsPerPhoto: per(cpu.get(n)!),
      inModels,
      rest: Number((per(cpu.get(n)!) - inModels).toFixed(1)),
      models,
      ...(nativeMs ? { overNative: Number((per(cpu.get(n)!) / nativeMs).toFixed(3)) } : {}),
      ...(n !== names[0]
        ? {
            vsFirst: {
              sameFaceCounts: diffs.every((d) => d.faces),
              minCosine: Math.min(...diffs.map((d) => d.cosine)),
              maxBoxPx: Math.max(...diffs.map((d) => d.box)),
              maxScore: Math.max(...diffs.map((d) => d.score)),
            },
          }
        : {}),
    };
    console.log(n, JSON.stringify(result[n]));
  }
  console.log('photos', bytes.length, 'rounds', rounds, 'load1', JSON.stringify(loads));
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
