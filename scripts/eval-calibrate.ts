// Builds wasm/models/calibration.json (faces) or wasm/models/voice-calibration.json (voice): the map from
// cosine to score = -12*log10(FAR).
//   npx tsx scripts/eval-calibrate.ts --dataset test/fixtures/photos/labelled-portraits [--workers N]
//   npx tsx scripts/eval-calibrate.ts --modality voice --dataset test/fixtures/speech [--workers N]
// Voice: every pair of clips of different speakers is an impostor comparison (clip against clip, as a
// single-clip enrolment is matched), with the service's default quality gates applied to each clip.
// Method (also written into the file):
//  1. one template per image of the dataset (int8, as the matcher sees it); every pair of different
//     identities is an impostor comparison;
//  2. FAR(c) = share of impostor cosines >= c, used directly where at least MIN_COUNT impostors lie above c;
//  3. beyond that the tail is extrapolated: log10 FAR is fitted as a straight line of the cosine over the
//     upper tail (FAR between MIN_COUNT/N and 5%), continued from the last empirical point. A straight line in
//     log-space decays more slowly than a Gaussian tail, so extrapolated scores err low (safe side);
//  4. score = clamp(-12*log10(FAR), 0, 200), made non-decreasing, sampled every 0.01 of cosine.
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { extractAll, loadDataset, pairCosines, type Modality } from '../src/runtime/commands/eval-lib.js';

const MIN_COUNT = 20;
const m = process.argv.indexOf('--modality');
const modality: Modality = m >= 0 && process.argv[m + 1] === 'voice' ? 'voice' : 'face';
const i = process.argv.indexOf('--dataset');
const dataset =
  i >= 0
    ? process.argv[i + 1]
    : modality === 'voice'
      ? 'test/fixtures/speech'
      : 'test/fixtures/photos/labelled-portraits';
const w = process.argv.indexOf('--workers');
const samples = loadDataset(dataset, modality);
await extractAll(
  samples,
  w >= 0 ? Number(process.argv[w + 1]) : availableParallelism(),
  undefined,
  process.argv.includes('--cache'),
  modality,
);
const { genuine, impostor } = pairCosines(samples);
const imp = Float64Array.from(impostor).sort();
const N = imp.length;
const countAbove = (c: number) => {
  // # impostors >= c
  let lo = 0,
    hi = N;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (imp[m] < c) lo = m + 1;
    else hi = m;
  }
  return N - lo;
};
// Fit of log10 FAR over the upper tail.
const xs: number[] = [],
  ys: number[] = [];
for (let c = -1; c <= 1; c += 0.005) {
  const k = countAbove(c);
  if (k >= MIN_COUNT && k <= 0.05 * N) {
    xs.push(c);
    ys.push(Math.log10(k / N));
  }
}
const mx = xs.reduce((a, b) => a + b, 0) / xs.length,
  my = ys.reduce((a, b) => a + b, 0) / ys.length;
const slope = xs.reduce((a, x, j) => a + (x - mx) * (ys[j] - my), 0) / xs.reduce((a, x) => a + (x - mx) ** 2, 0);
let lastC = -1,
  lastLog = 0;
const points: [number, number][] = [];
let prev = 0;
for (let j = 0; j <= 200; j++) {
  const c = Math.round((-1 + j * 0.01) * 100) / 100;
  const k = countAbove(c);
  let logFar: number;
  if (k >= MIN_COUNT) {
    logFar = Math.log10(k / N);
    lastC = c;
    lastLog = logFar;
  } else logFar = lastLog + slope * (c - lastC);
  const s = Math.max(prev, Math.min(200, Math.max(0, -12 * logFar)));
  prev = s;
  points.push([c, Math.round(s * 100) / 100]);
}
const manifest = JSON.parse(
  readFileSync(
    new URL(
      modality === 'voice' ? '../wasm/models/voice-manifest.json' : '../wasm/models/manifest.json',
      import.meta.url,
    ),
    'utf8',
  ),
);
const mean = (a: Float64Array) => a.reduce((s, v) => s + v, 0) / a.length;
const table = {
  templateVersion: manifest.templateVersion,
  method: {
    description:
      'score = -12*log10(FAR); FAR measured on impostor cosines (int8 templates) where >= 20 impostors lie above the cosine, else a log-linear tail fit continued from the last measured point (conservative); monotone; knots every 0.01',
    dataset: dataset.replace(/^.*fixtures\/(photos|speech)/, 'test/fixtures/$1'),
    ...(modality === 'voice'
      ? {
          speakers: new Set(samples.map((s) => s.identity)).size,
          source: 'scripts/fetch-test-speech.mjs (Debian asterisk-core-sounds-*-wav and klettres-data)',
        }
      : {}),
    images: samples.length,
    enrolled: samples.filter((s) => s.q).length,
    impostorPairs: N,
    genuinePairs: genuine.length,
    impostorMean: Number(mean(imp).toFixed(4)),
    impostorMax: Number(imp[N - 1].toFixed(4)),
    tailSlopeLog10PerCosine: Number(slope.toFixed(3)),
    lastMeasuredCosine: lastC,
    builtWith:
      modality === 'voice'
        ? 'npx tsx scripts/eval-calibrate.ts --modality voice --dataset test/fixtures/speech'
        : 'npx tsx scripts/eval-calibrate.ts --dataset test/fixtures/photos/labelled-portraits',
  },
  points,
};
writeFileSync(
  new URL(
    modality === 'voice' ? '../wasm/models/voice-calibration.json' : '../wasm/models/calibration.json',
    import.meta.url,
  ),
  JSON.stringify(table, null, 1) + '\n',
);
console.log(JSON.stringify(table.method, null, 1));
for (const c of modality === 'voice' ? [0.5, 0.6, 0.7, 0.8, 0.9] : [0.2, 0.3, 0.4, 0.5, 0.6])
  console.log(`cos ${c} -> score ${points[Math.round((c + 1) * 100)][1]}`);
