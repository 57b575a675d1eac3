// Builds wasm/models/calibration.json (faces) or wasm/models/voice-calibration.json (voice), the map from cosine
// to score = -12*log10(FAR), and checks the shipped map against impostors first (docs/calibration.md).
//   npx tsx scripts/eval-calibrate.ts --dataset ../shared/data/faces-dev --dataset test/fixtures/photos/labelled-portraits \
//       --variants [--check] [--workers N] [--cache] [--json OUT]
//   npx tsx scripts/eval-calibrate.ts --modality voice --dataset test/fixtures/speech [--workers N]
// --dataset (repeatable): identity/image folders (faces) or speaker/clip.wav folders (voice).
// --variants (faces): each photo also downscaled to 150/112/72 px, cropped tight, mirrored and recompressed
//   (src/runtime/commands/calibration-set.ts), written once under .cache/calibration-set/.
// --probe-photos (faces): also probes of 2 and 3 photos against subjects of 1, 2 and 4 samples, counted as k and
//   as j*k comparisons (scripts/eval-probe-photos.ts).
// --envelope (faces, with --variants): the table written scores each cosine by the highest FAR of all pairs and
//   of each like-for-like kind (crop against crop ...), so every kind keeps the FAR its scores claim; the table
//   built from all pairs alone is measured beside it.
// --check: only measure the shipped table (claimed vs measured FAR at 36, 48 and 60, one sample and subjects
//   of 2-4 samples); without it the table is rebuilt from these impostors and measured again.
// Every pair of images of different identities is an impostor comparison (int8 templates, as the matcher sees
// them). Voice: clip against clip, with the service's default quality gates applied to each clip.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Calibration, type CalibrationTable } from '../src/biometrics/calibration.js';
import { writeCalibrationSet } from '../src/runtime/commands/calibration-set.js';
import {
  buildCalibrationPoints,
  type BuiltTable,
  checkFar,
  farLines,
  scoresOf,
  type FarCheck,
} from '../src/runtime/commands/calibration-table.js';
import { extractAll, loadDataset, type Modality } from '../src/runtime/commands/eval-lib.js';
import { cosineMatrix, samplesFigures } from '../src/runtime/commands/eval-samples.js';
import { probePhotosFigures } from './eval-probe-photos.js';

const argv = process.argv;
const values = (name: string) => argv.flatMap((a, i) => (a === `--${name}` && argv[i + 1] ? [argv[i + 1]!] : []));
const modality: Modality = values('modality')[0] === 'voice' ? 'voice' : 'face';
const datasets = values('dataset');
if (datasets.length === 0)
  datasets.push(modality === 'voice' ? 'test/fixtures/speech' : 'test/fixtures/photos/labelled-portraits');
const checkOnly = argv.includes('--check');
const tableUrl = new URL(
  modality === 'voice' ? '../wasm/models/voice-calibration.json' : '../wasm/models/calibration.json',
  import.meta.url,
);
const shipped = new Calibration(JSON.parse(readFileSync(tableUrl, 'utf8')) as CalibrationTable);

let folder = datasets[0]!;
if (modality === 'face' && (argv.includes('--variants') || datasets.length > 1)) {
  const key = createHash('sha256')
    .update([...datasets].sort().join('\n') + (argv.includes('--variants') ? '\nvariants' : ''))
    .digest('hex')
    .slice(0, 12);
  folder = `.cache/calibration-set/${key}`;
  if (argv.includes('--variants')) await writeCalibrationSet(datasets, folder);
  else await writeCalibrationSet(datasets, folder, undefined, []);
}
const samples = modality === 'voice' ? datasets.flatMap((d) => loadDataset(d, 'voice')) : loadDataset(folder);
const w = values('workers')[0];
await extractAll(samples, w ? Number(w) : availableParallelism(), undefined, argv.includes('--cache'), modality);
const ok = samples.filter((s) => s.q);
const m = cosineMatrix(ok);
const n = ok.length;
let genuinePairs = 0;
const imp: number[] = [];
for (let i = 0; i < n; i++)
  for (let j = i + 1; j < n; j++) {
    if (ok[i]!.identity === ok[j]!.identity) genuinePairs++;
    else imp.push(m[i * n + j]!);
  }
const impostors = Float64Array.from(imp).sort();
/** The photo a calibration-set file was made from (its copies share it). */
const sourceOf = (file: string) => file.replace(/__[a-z0-9]+\.jpg$/, '').replace(/\.[a-z]+$/, '');
/** Genuine cosines of pairs made from two different photos (a photo against its own copy says little). */
const genuine: number[] = [];
for (let i = 0; i < n; i++)
  for (let j = i + 1; j < n; j++)
    if (ok[i]!.identity === ok[j]!.identity && sourceOf(ok[i]!.file) !== sourceOf(ok[j]!.file))
      genuine.push(m[i * n + j]!);
/** A file's kind in the calibration set: the variant it was made by (calibration-set.ts), or the original. */
const kindOf = (file: string) => file.match(/__([a-z0-9]+)\.jpg$/)?.[1] ?? 'original';
/** Impostor cosines of like-for-like pairs (both images of one kind: crop against crop, 72 px against 72 px). */
const byKind = new Map<string, number[]>();
if (modality === 'face')
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) {
      const kind = kindOf(ok[i]!.file);
      if (ok[i]!.identity !== ok[j]!.identity && kind === kindOf(ok[j]!.file))
        (byKind.get(kind) ?? byKind.set(kind, []).get(kind)!).push(m[i * n + j]!);
    }
console.log(
  `${samples.length} ${modality === 'voice' ? 'clips' : 'images'} (${ok.length} enrolled, ${new Set(ok.map((s) => s.identity)).size} identities), ${impostors.length} impostor pairs, ${genuinePairs} genuine pairs`,
);

/** Claimed vs measured FAR at 36/48/60, one sample and (faces) subjects of 2..4 samples. */
function measure(cal: Calibration, label: string): Record<string, FarCheck[]> {
  const out: Record<string, FarCheck[]> = { oneSample: checkFar(scoresOf(impostors, cal), [36, 48, 60]) };
  if (modality === 'face') {
    for (const k of [2, 3, 4]) out[`subjectsOf${k}`] = samplesFigures(ok, m, k, cal, true).service.far;
    if (byKind.size > 1)
      for (const [kind, cosines] of byKind)
        out[`${kind} vs ${kind}`] = checkFar(scoresOf(Float64Array.from(cosines), cal), [36, 48, 60]);
  }
  if (modality === 'face' && argv.includes('--probe-photos'))
    for (const j of [2, 3])
      for (const k of [1, 2, 4]) {
        const f = probePhotosFigures(ok, m, j, k, cal);
        out[`${j} photos vs ${k}, as k`] = f.countedK.far;
        out[`${j} photos vs ${k}, as jk`] = f.countedJK.far;
        console.log(
          `  ${j} photos vs subjects of ${k}: ${f.genuine} genuine, TAR at 48 ${f.countedK.tarAt48.toFixed(3)} counted k, ${f.countedJK.tarAt48.toFixed(3)} counted j*k`,
        );
      }
  const accepted = (t: number) => genuine.filter((c) => cal.cosineToScore(c) >= t).length / genuine.length;
  console.log(`${label}:`);
  console.log(
    `  genuine pairs of two photos (${genuine.length}) accepted at 36 / 48 / 60: ${[36, 48, 60].map((t) => accepted(t).toFixed(3)).join(' / ')}`,
  );
  for (const [what, checks] of Object.entries(out)) for (const line of farLines(what, checks)) console.log(`  ${line}`);
  return out;
}

const report: Record<string, unknown> = { datasets, variants: argv.includes('--variants') };
report.before = measure(shipped, `the shipped table (${shipped.templateVersion})`);
if (!checkOnly) {
  const pooled = buildCalibrationPoints(impostors);
  const envelope = modality === 'face' && argv.includes('--envelope');
  const built = envelope ? envelopeOf(pooled, [...byKind.values()]) : pooled;
  if (envelope)
    report.pooled = measure(
      new Calibration({ templateVersion: shipped.templateVersion, points: pooled.points }),
      'the table of all pairs alone (not written)',
    );
  const manifest = JSON.parse(
    readFileSync(
      new URL(
        modality === 'voice' ? '../wasm/models/voice-manifest.json' : '../wasm/models/manifest.json',
        import.meta.url,
      ),
      'utf8',
    ),
  );
  const mean = impostors.reduce((s, v) => s + v, 0) / impostors.length;
  const table = {
    templateVersion: manifest.templateVersion,
    method: {
      description:
        (envelope
          ? 'the lowest score, knot by knot, of the tables built from all impostor pairs and from each like-for-like kind of pair (crop against crop, 72 px against 72 px ...); each: '
          : '') +
        'score = -12*log10(FAR); FAR measured on impostor cosines (int8 templates) where >= 20 impostors lie above the cosine, else a log-linear tail fit continued from the last measured point (conservative); monotone; knots every 0.01',
      datasets: datasets.map((d) =>
        d.replace(/^.*fixtures\/(photos|speech)/, 'test/fixtures/$1').replace(/^.*shared\/data\//, '../shared/data/'),
      ),
      ...(modality === 'voice'
        ? {
            speakers: new Set(samples.map((s) => s.identity)).size,
            source: 'scripts/fetch-test-speech.mjs (Debian asterisk-core-sounds-*-wav and klettres-data)',
          }
        : {
            variants: argv.includes('--variants')
              ? 'each photo also at 150/112/72 px, tight crop, mirrored, JPEG q30'
              : 'none',
          }),
      images: samples.length,
      enrolled: ok.length,
      impostorPairs: impostors.length,
      genuinePairs,
      impostorMean: Number(mean.toFixed(4)),
      impostorMax: Number(impostors[impostors.length - 1]!.toFixed(4)),
      tailSlopeLog10PerCosine: Number(built.slope.toFixed(3)),
      lastMeasuredCosine: built.lastMeasuredCosine,
      builtWith:
        modality === 'voice'
          ? 'npx tsx scripts/eval-calibrate.ts --modality voice --dataset test/fixtures/speech'
          : `npx tsx scripts/eval-calibrate.ts ${datasets.map((d) => `--dataset ${d}`).join(' ')}${argv.includes('--variants') ? ' --variants' : ''}${envelope ? ' --envelope' : ''}`,
    },
    points: built.points,
  };
  writeFileSync(tableUrl, JSON.stringify(table, null, 1) + '\n');
  console.log(`wrote ${tableUrl.pathname}`);
  report.after = measure(new Calibration(table), 'the new table (measured on the impostors it was built from)');
  for (const c of modality === 'voice' ? [0.5, 0.6, 0.7, 0.8, 0.9] : [0.2, 0.3, 0.4, 0.5, 0.6])
    console.log(
      `cos ${c} -> score ${built.points[Math.round((c + 1) * 100)]![1]} (was ${shipped.cosineToScore(c).toFixed(2)})`,
    );
}
/** Knot by knot the lowest score (the highest FAR) of the table of all pairs and those of each kind's pairs. */
function envelopeOf(all: BuiltTable, kinds: number[][]): BuiltTable {
  const tables = [all, ...kinds.map((k) => buildCalibrationPoints(Float64Array.from(k).sort()))];
  const points = all.points.map(([c], i) => [c, Math.min(...tables.map((t) => t.points[i]![1]))] as [number, number]);
  return { ...all, points };
}

const json = values('json')[0];
if (json) writeFileSync(json, JSON.stringify(report, null, 1) + '\n');
