// npm run eval -- --dataset DIR [--json OUT] [--plot OUT.svg] [--workers N] [--cache]
// Accuracy of the face engine over any folder laid out as identity/image.{jpg,png} (the LFW convention).
import { writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { FACE_CALIBRATION } from '../src/biometrics/calibration.js';
import { eer, extractAll, loadDataset, pairCosines, plotSvg, rank1, tarAtFar } from './eval-lib.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const dataset = arg('dataset');
if (!dataset) {
  console.error('usage: npm run eval -- --dataset DIR [--json OUT] [--plot OUT.svg] [--workers N]');
  process.exit(2);
}
const samples = loadDataset(dataset);
if (samples.length === 0) { console.error(`no identity/image.{jpg,png} under ${dataset}`); process.exit(2); }
await extractAll(samples, Number(arg('workers') ?? availableParallelism()), undefined, process.argv.includes('--cache'));
const { genuine, impostor } = pairCosines(samples);
// Error rates are computed on cosines (scores are a monotone map of them, but clamp at 0 and 200).
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
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sd = (xs: number[]) => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2)));
console.log(`dataset            ${dataset}`);
for (const [k, v] of Object.entries(result)) console.log(`${k.padEnd(18)} ${typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(4) : v}`);
console.log(`genuine cosine     ${mean(genuine).toFixed(3)} +- ${sd(genuine).toFixed(3)} (min ${Math.min(...genuine).toFixed(3)}, score ${FACE_CALIBRATION.cosineToScore(Math.min(...genuine)).toFixed(1)})`);
console.log(`impostor cosine    ${mean(impostor).toFixed(3)} +- ${sd(impostor).toFixed(3)} (max ${Math.max(...impostor).toFixed(3)}, score ${FACE_CALIBRATION.cosineToScore(Math.max(...impostor)).toFixed(1)})`);
for (const s of samples.filter((x) => !x.q)) console.log(`failed to enrol    ${s.file}: ${s.error}`);
if (impostor.length < 1e4) console.log(`note: ${impostor.length} impostor pairs cannot resolve FAR 1e-4; TAR there is measured against the highest impostor`);
const json = arg('json');
if (json) writeFileSync(json, JSON.stringify(result, null, 2) + '\n');
const plot = arg('plot');
if (plot) writeFileSync(plot, plotSvg(genuine, impostor, FACE_CALIBRATION, `BIMS face eval: ${dataset}`));
