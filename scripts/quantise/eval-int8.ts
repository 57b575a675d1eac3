// npx tsx scripts/quantise/eval-int8.ts --dataset DIR [--int8 fr_feature,...] [--suffix S] [--json OUT]
// `npm run eval`'s face figures (the same dataset reader, pair scores, EER, TAR at FAR and rank-1 from
// scripts/eval-lib.ts, on int8 templates of the most confident face, checks off) for the float models and
// for the int8 models of scripts/quantise-models.ts, both in onnxruntime-web in this process, one image at a
// time. The pool `npm run eval` uses checks every model file against the manifest's SHA-256 and so only runs
// the float models; the float column here reproduces its figures.
import { readFileSync, writeFileSync } from 'node:fs';
import { analyseImage } from '../../src/biometrics/face/pipeline.js';
import type { FaceModelId, ModelRunner } from '../../src/biometrics/face/runner.js';
import { quantize } from '../../src/biometrics/template.js';
import { enableFastJpegNode, nodeModelLoader } from '../../src/extraction/node-models.js';
import { OrtWebRunner } from '../../src/extraction/ort-web-runner.js';
import { eer, loadDataset, pairCosines, rank1, tarAtFar, type Sample } from '../../src/runtime/commands/eval-lib.js';
import { INT8_MODELS } from '../quantise-models.js';
import { int8Loader } from './int8-loader.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function figures(
  runner: ModelRunner,
  dataset: string,
): Promise<{ result: Record<string, number>; embeddings: (Float32Array | undefined)[] }> {
  const samples: Sample[] = loadDataset(dataset);
  const embeddings: (Float32Array | undefined)[] = [];
  for (const s of samples) {
    try {
      const r = await analyseImage(runner, new Uint8Array(readFileSync(s.file)), { checks: false });
      if (r.faces.length === 0) s.error = 'no face';
      else {
        s.q = quantize(r.faces[0]!.embedding).q;
        embeddings.push(r.faces[0]!.embedding);
        continue;
      }
    } catch (e) {
      s.error = (e as Error).message;
    }
    embeddings.push(undefined);
  }
  const { genuine, impostor } = pairCosines(samples);
  const result = {
    images: samples.length,
    failedToEnrol: samples.filter((s) => !s.q).length,
    genuinePairs: genuine.length,
    impostorPairs: impostor.length,
    eer: eer(genuine, impostor),
    tarAtFar1e2: tarAtFar(genuine, impostor, 1e-2),
    tarAtFar1e3: tarAtFar(genuine, impostor, 1e-3),
    tarAtFar1e4: tarAtFar(genuine, impostor, 1e-4),
    rank1: rank1(samples),
    genuineMin: Math.min(...genuine),
    impostorMax: Math.max(...impostor),
  };
  return { result, embeddings };
}

const dataset = arg('dataset');
if (!dataset) {
  console.error('usage: npx tsx scripts/quantise/eval-int8.ts --dataset DIR [--json OUT]');
  process.exit(2);
}
await enableFastJpegNode();
const float = await OrtWebRunner.create({ loadModel: nodeModelLoader() });
const f = await figures(float, dataset);
await float.release();
// --int8 fr_feature,fr_detect: which models run int8 (default all of INT8_MODELS); --suffix: which build.
const int8Models = (arg('int8')?.split(',') ?? INT8_MODELS) as FaceModelId[];
const int8 = await OrtWebRunner.create({ loadModel: int8Loader(int8Models, arg('suffix') ?? ''), verify: false });
const q = await figures(int8, dataset);
await int8.release();
// Same image, float vs int8 embedding.
const cos: number[] = [];
f.embeddings.forEach((a, i) => {
  const b = q.embeddings[i];
  if (!a || !b) return;
  let d = 0,
    na = 0,
    nb = 0;
  for (let k = 0; k < a.length; k++) {
    d += a[k]! * b[k]!;
    na += a[k]! ** 2;
    nb += b[k]! ** 2;
  }
  cos.push(d / Math.sqrt(na * nb));
});
cos.sort((a, b) => a - b);
const out = {
  dataset,
  int8Models,
  suffix: arg('suffix') ?? '',
  float: f.result,
  int8: q.result,
  sameImageCosine: { min: cos[0], median: cos[cos.length >> 1], n: cos.length },
};
console.log(
  JSON.stringify(out, (_, v) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toFixed(5)) : v), 2),
);
const json = arg('json');
if (json) writeFileSync(json, JSON.stringify(out, null, 2) + '\n');
