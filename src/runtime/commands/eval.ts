// npm run eval -- [--modality face|voice] --dataset DIR [--json OUT] [--plot OUT.svg] [--workers N] [--cache]
//                  [--backend wasm|native]   (the face models' extraction backend, docs/extraction.md)
//                  [--probe-seconds 1,1.5,2] (voice: probes cut to that much speech, eval-voice-probes.ts)
//                  [--no-framing]            (faces: small photos not framed for the detector, the p2 pipeline)
//                  [--worst N]               (faces: the N worst genuine and impostor pairs listed, default 10)
//                  [--samples-per-subject 2,3,4] (faces: subjects enrolled with k photos, each rule, eval-samples.ts)
// Accuracy of the face engine over any folder laid out as identity/image.{jpg,png} (the LFW convention), or
// of the voice engine over speaker/clip.wav folders. Voice adds the figures of enrolments of three clips
// averaged (`enrol3`), which is how the service enrols several voice samples. Faces add the figures per
// image-size band and the worst pairs by name (eval-bands.ts).
import { plotSvg } from './eval-plot.js';
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { availableParallelism } from 'node:os';
import { calibrationOf } from '../../biometrics/calibration.js';
import {
  eer,
  enrolledPairCosines,
  extractAll,
  loadDataset,
  pairCosines,
  rank1,
  tarAtFar,
  type Modality,
} from './eval-lib.js';
import { bandFigures, worstPairs, type BandFigures, type NamedPair } from './eval-bands.js';
import { cosineMatrix, samplesFigures, samplesTable, type SamplesFigures } from './eval-samples.js';
import { probeLengthFigures, probeTable, type ProbeLengthFigures } from './eval-voice-probes.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const dataset = arg('dataset');
const modality = (arg('modality') ?? 'face') as Modality;
if (!dataset || (modality !== 'face' && modality !== 'voice')) {
  console.error(
    'usage: npm run eval -- [--modality face|voice] --dataset DIR [--json OUT] [--plot OUT.svg] [--workers N] [--cache] [--probe-seconds S[,S...]]',
  );
  process.exit(2);
}
const probeSeconds = arg('probe-seconds')?.split(',').map(Number);
if (probeSeconds && (modality !== 'voice' || !probeSeconds.every((s) => s > 0))) {
  console.error('--probe-seconds takes positive seconds of speech (e.g. 1,1.5,2), with --modality voice');
  process.exit(2);
}
const calibration = calibrationOf(modality);
const samples = loadDataset(dataset, modality);
if (samples.length === 0) {
  console.error(`no ${modality === 'voice' ? 'speaker/clip.wav' : 'identity/image.{jpg,png}'} under ${dataset}`);
  process.exit(2);
}
const backend = (arg('backend') ?? 'wasm') as 'wasm' | 'native';
if (backend !== 'wasm' && backend !== 'native') {
  console.error('--backend takes wasm or native');
  process.exit(2);
}
const samplesPerSubject = arg('samples-per-subject')?.split(',').map(Number);
if (samplesPerSubject && (modality !== 'face' || !samplesPerSubject.every((k) => Number.isInteger(k) && k >= 2))) {
  console.error('--samples-per-subject takes numbers of photos per subject, 2 or more (e.g. 2,3,4), with faces');
  process.exit(2);
}
const worstCount = Number(arg('worst') ?? 10);
if (!Number.isInteger(worstCount) || worstCount < 0) {
  console.error('--worst takes a number of pairs (0 or more)');
  process.exit(2);
}
// The native backend needs onnxruntime-node: `npm run eval` (scripts/eval.ts) installs it in tools/bench first.
await extractAll(
  samples,
  Number(arg('workers') ?? availableParallelism()),
  undefined,
  process.argv.includes('--cache'),
  modality,
  backend,
  !process.argv.includes('--no-framing'),
);
const { genuine, impostor } = pairCosines(samples);
// Error rates are computed on cosines (scores are a monotone map of them, but clamp at 0 and 200).
const result: Record<string, unknown> = {
  ...(modality === 'face' ? { backend, framing: !process.argv.includes('--no-framing') } : {}),
  images: samples.length,
  failedToEnrol: samples.filter((s) => !s.q).length,
  // Voice: which gate refused how many clips (the figures below are over the accepted clips only).
  ...(modality === 'voice' ? { refusedBy: refusedBy(samples) } : {}),
  genuinePairs: genuine.length,
  impostorPairs: impostor.length,
  eer: eer(genuine, impostor),
  tarAtFar1e2: tarAtFar(genuine, impostor, 1e-2),
  tarAtFar1e3: tarAtFar(genuine, impostor, 1e-3),
  tarAtFar1e4: tarAtFar(genuine, impostor, 1e-4),
  rank1: rank1(samples),
};
if (modality === 'voice') {
  const e3 = enrolledPairCosines(samples, 3);
  result.enrol3 = {
    enrolments: e3.enrolments,
    genuinePairs: e3.genuine.length,
    impostorPairs: e3.impostor.length,
    eer: eer(e3.genuine, e3.impostor),
    tarAtFar1e2: tarAtFar(e3.genuine, e3.impostor, 1e-2),
    tarAtFar1e3: tarAtFar(e3.genuine, e3.impostor, 1e-3),
  };
}
if (modality === 'face') {
  result.bands = bandFigures(samples);
  const worst = worstPairs(samples, worstCount);
  const named = (ps: NamedPair[]) =>
    ps.map((p) => ({
      a: relative(dataset, p.a),
      b: relative(dataset, p.b),
      cosine: p.cosine,
      score: calibration.cosineToScore(p.cosine),
    }));
  result.worstGenuinePairs = named(worst.genuine);
  result.worstImpostorPairs = named(worst.impostor);
}
function refusedBy(ss: typeof samples): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of ss)
    if (!s.q) {
      const k = s.error?.match(/^[A-Z_]+(?=:)/)?.[0] ?? 'OTHER';
      out[k] = (out[k] ?? 0) + 1;
    }
  return out;
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sd = (xs: number[]) => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2)));
const fmt = (v: unknown) =>
  typeof v === 'number' && !Number.isInteger(v)
    ? v.toFixed(4)
    : typeof v === 'object'
      ? JSON.stringify(v, (_, x) => (typeof x === 'number' && !Number.isInteger(x) ? Number(x.toFixed(4)) : x))
      : v;
console.log(`dataset            ${dataset} (${modality})`);
const listedApart = new Set(['bands', 'worstGenuinePairs', 'worstImpostorPairs']);
for (const [k, v] of Object.entries(result)) if (!listedApart.has(k)) console.log(`${k.padEnd(18)} ${fmt(v)}`);
console.log(
  `genuine cosine     ${mean(genuine).toFixed(3)} +- ${sd(genuine).toFixed(3)} (min ${Math.min(...genuine).toFixed(3)}, score ${calibration.cosineToScore(Math.min(...genuine)).toFixed(1)})`,
);
console.log(
  `impostor cosine    ${mean(impostor).toFixed(3)} +- ${sd(impostor).toFixed(3)} (max ${Math.max(...impostor).toFixed(3)}, score ${calibration.cosineToScore(Math.max(...impostor)).toFixed(1)})`,
);
for (const s of samples.filter((x) => !x.q)) console.log(`failed to enrol    ${s.file}: ${s.error}`);
if (result.bands) {
  console.log("per size band (a pair counts in the band of its smaller image; rank-1 by the probe's band):");
  console.log(bandTable(result.bands as BandFigures[]).join('\n'));
  for (const [title, key] of [
    ['worst genuine pairs (lowest)', 'worstGenuinePairs'],
    ['worst impostor pairs (highest)', 'worstImpostorPairs'],
  ] as const) {
    console.log(`${title}:`);
    for (const p of result[key] as { a: string; b: string; cosine: number; score: number }[])
      console.log(`  ${p.cosine.toFixed(3).padStart(6)} (score ${p.score.toFixed(1).padStart(5)})  ${p.a}  ${p.b}`);
  }
}
function bandTable(bands: BandFigures[]): string[] {
  const f = (v: number | null, d = 4) => (v === null ? '-' : v.toFixed(d));
  const rows = [['band', 'images', 'FTE', 'genuine/impostor', 'EER', 'TAR@1e-2', 'TAR@1e-3', 'TAR@1e-4', 'rank-1']];
  for (const b of bands)
    rows.push([
      b.band,
      String(b.images),
      String(b.failedToEnrol),
      `${b.genuinePairs}/${b.impostorPairs}`,
      f(b.eer),
      f(b.tarAtFar1e2),
      f(b.tarAtFar1e3),
      f(b.tarAtFar1e4),
      `${f(b.rank1)} (${b.rank1Probes})`,
    ]);
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => ('  ' + r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ')).trimEnd());
}
if (impostor.length < 1e4)
  console.log(
    `note: ${impostor.length} impostor pairs cannot resolve FAR 1e-4; TAR there is measured against the highest impostor`,
  );
if (samplesPerSubject) {
  const ok = samples.filter((s) => s.q);
  const m = cosineMatrix(ok);
  result.samplesPerSubject = samplesPerSubject.map((k) => samplesFigures(ok, m, k, calibration));
  for (const line of samplesTable(result.samplesPerSubject as SamplesFigures[])) console.log(line);
}
if (probeSeconds) {
  result.probeSeconds = await probeLengthFigures(
    samples,
    probeSeconds,
    Number(arg('workers') ?? availableParallelism()),
  );
  for (const line of probeTable(result.probeSeconds as ProbeLengthFigures[])) console.log(line);
}
const json = arg('json');
if (json) writeFileSync(json, JSON.stringify(result, null, 2) + '\n');
const plot = arg('plot');
if (plot) writeFileSync(plot, plotSvg(genuine, impostor, calibration, `BIMS ${modality} eval: ${dataset}`));
