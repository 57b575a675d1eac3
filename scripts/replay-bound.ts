// npx tsx scripts/replay-bound.ts [--dataset DIR] [--workers N]
// How close two genuine captures of one person come, to check the replay bound of remote verification
// (REPLAY_COSINE_BOUND, src/services/templates/replay.ts): a probe at or above it is refused as a copy of a
// template the service holds. Prints the distribution of cosines between DIFFERENT photos of the same person
// (max, p99, p95, mean, the closest pairs) and the margin to the bound; exits 1 when a genuine pair reaches it.
// Templates are cached in .cache/eval/ like `npm run eval -- --cache`.
import { availableParallelism } from 'node:os';
import { basename } from 'node:path';
import { cosineInt8 } from '../src/biometrics/template.js';
import { REPLAY_COSINE_BOUND } from '../src/services/templates/replay.js';
import { extractAll, loadDataset } from '../src/runtime/commands/eval-lib.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/**
 * Pairs of files that are one photograph (cropped, resized or colour-processed), checked by eye: not two
 * captures, so not part of the genuine distribution; reported apart as what re-processing one image gives.
 */
const SAME_PHOTOGRAPH = [['audrey.jpg', 'audrey_crop.jpg']];
const samePhotograph = (a: string, b: string) =>
  SAME_PHOTOGRAPH.some(([x, y]) => (x === a && y === b) || (x === b && y === a));

const dataset = arg('dataset') ?? 'test/fixtures/photos/labelled-portraits';
const samples = loadDataset(dataset);
await extractAll(samples, Number(arg('workers') ?? availableParallelism()), () => true, true);
const ok = samples.filter((s) => s.q);
const genuine: { cosine: number; a: string; b: string }[] = [];
const reprocessed: { cosine: number; a: string; b: string }[] = [];
for (let i = 0; i < ok.length; i++) {
  for (let j = i + 1; j < ok.length; j++) {
    if (ok[i]!.identity !== ok[j]!.identity) continue;
    const a = basename(ok[i]!.file),
      b = basename(ok[j]!.file);
    (samePhotograph(a, b) ? reprocessed : genuine).push({
      cosine: cosineInt8(ok[i]!.q!, ok[j]!.q!),
      a: `${ok[i]!.identity}/${a}`,
      b: `${ok[j]!.identity}/${b}`,
    });
  }
}
genuine.sort((x, y) => y.cosine - x.cosine);
const ascending = genuine.map((g) => g.cosine).sort((x, y) => x - y);
const percentile = (p: number) => ascending[Math.min(ascending.length - 1, Math.ceil(p * ascending.length) - 1)]!;
const mean = ascending.reduce((s, x) => s + x, 0) / ascending.length;
const f = (x: number) => x.toFixed(4);
console.log(
  `dataset              ${dataset}: ${ok.length} templates, ${genuine.length} pairs of different photos of one person`,
);
console.log(
  `genuine cosine       max ${f(genuine[0]!.cosine)}, p99 ${f(percentile(0.99))}, p95 ${f(percentile(0.95))}, mean ${f(mean)}`,
);
for (const g of genuine.slice(0, 5)) console.log(`  closest            ${f(g.cosine)}  ${g.a}  ${g.b}`);
for (const r of reprocessed) console.log(`one photograph      ${f(r.cosine)}  ${r.a}  ${r.b} (not counted)`);
console.log(
  `replay bound         ${REPLAY_COSINE_BOUND} (margin over the max: ${f(REPLAY_COSINE_BOUND - genuine[0]!.cosine)})`,
);
if (genuine[0]!.cosine >= REPLAY_COSINE_BOUND) {
  console.error('a genuine pair reaches the replay bound: real recaptures would be refused');
  process.exit(1);
}
