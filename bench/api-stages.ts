// npm run bench -- api-stages [--faces N] [--rounds N] [--backend native|wasm]
// Where one enrolment's extraction CPU goes, stage by stage: the worker's pipeline as `analyseImage` runs it
// for an enrolment (checks, no age/gender, no liveness) inline on one thread, over the api bench's 512x512
// portraits. Process CPU (this thread, V8's helpers, the runtime's kernels) around each step, summed over the
// faces: CPU hardly moves with the machine's other load, unlike wall time. The steps are the pipeline's own
// functions called in its order (pipeline.ts, attributes.ts), so the stages add up to about one analysis.
import { availableParallelism, loadavg } from 'node:os';
import { decodeImage } from '../src/biometrics/image/decode.js';
import { toPlanar } from '../src/biometrics/image/planes.js';
import { decodeDetections, detectInput } from '../src/biometrics/face/detect.js';
import { alignFace, landmarkInput, squareBox } from '../src/biometrics/face/pipeline.js';
import { eyesOpen, poseInput } from '../src/biometrics/face/attributes.js';
import { brightness, sharpness } from '../src/biometrics/checks.js';
import type { FaceModelId, ModelRunner } from '../src/biometrics/face/runner.js';
import { enableFastJpegNode, nodeModelLoader } from '../src/extraction/node-models.js';
import { OrtWebRunner } from '../src/extraction/ort-web-runner.js';
import { ensureTool } from '../scripts/tool.mjs';
import { portraits } from './api.js';

const option = (args: string[], name: string, fallback: number) =>
  args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : fallback;

export async function run(args: string[]) {
  const faces = option(args, 'faces', 60);
  const rounds = option(args, 'rounds', 2);
  const backend = args.includes('--backend') ? args[args.indexOf('--backend') + 1] : 'native';
  if (backend !== 'native' && backend !== 'wasm') throw new Error('--backend takes native or wasm');
  if (backend === 'native') ensureTool('bench');
  await enableFastJpegNode();
  const runner: ModelRunner =
    backend === 'native'
      ? await (await import('../src/extraction/node-native-runner.js')).OrtNodeRunner.create({
          loadModel: nodeModelLoader(),
        })
      : await OrtWebRunner.create({ loadModel: nodeModelLoader() });
  const photos = await portraits(faces);
  const spent = new Map<string, number>();
  const cpu = () => {
    const c = process.cpuUsage();
    return (c.user + c.system) / 1000;
  };
  const timed = async <T>(stage: string, step: () => T | Promise<T>): Promise<T> => {
    const c0 = cpu();
    const result = await step();
    spent.set(stage, (spent.get(stage) ?? 0) + cpu() - c0);
    return result;
  };
  const models: ModelRunner = {
    run: (id: FaceModelId, input, dims) => timed(`model ${id}`, () => runner.run(id, input, dims)),
    release: () => runner.release(),
  };
  const enrolmentAnalysis = async (bytes: Uint8Array) => {
    const img = await timed('decode (mozjpeg, RGBA -> RGB)', () => decodeImage(bytes));
    const input = await timed('detector input: area resize to 320x240 + planes', () => detectInput(img));
    const det = await models.run('fr_detect', input, [1, 3, 240, 320]);
    const d = decodeDetections(det.scores!, det.boxes!, img.width, img.height)[0];
    if (!d) return;
    const box = squareBox(d);
    const crop = await timed('landmark crop 64x64 + grey', () => landmarkInput(img, box));
    const out = (await models.run('fr_landmark', crop, [1, 1, 64, 64])).output!;
    const lm = new Float32Array(136);
    for (let i = 0; i < 136; i++) lm[i] = out[i]! * box.side + (i % 2 ? box.y : box.x);
    const aligned = await timed('alignment warp 112x112', () => alignFace(img, lm));
    const planar = await timed('embedding input: toPlanar', () =>
      toPlanar(aligned, [127, 127, 127], [128, 128, 128], 'BGR'),
    );
    await models.run('fr_feature', planar, [1, 3, 112, 112]);
    await timed('sharpness + brightness', () => [sharpness(aligned), brightness(aligned)]);
    const pose = await timed('pose crop 224x224 + planes', () => poseInput(img, box));
    await models.run('fr_pose', pose, [1, 3, 224, 224]);
    await timed('eye crops 24x24 (their model runs counted apart)', () => eyesOpen(models, img, lm));
  };
  for (const p of photos) await enrolmentAnalysis(p); // warm-up: V8's optimising tier, the sessions' first runs
  spent.clear();
  const loadBefore = loadavg().map((x) => Number(x.toFixed(1)));
  const c0 = cpu();
  for (let r = 0; r < rounds; r++) for (const p of photos) await enrolmentAnalysis(p);
  const n = photos.length * rounds;
  const total = cpu() - c0;
  // The eye crops' stage includes their model runs (timed inside it too): counted once, under the models.
  const eyes = spent.get('eye crops 24x24 (their model runs counted apart)') ?? 0;
  spent.set('eye crops 24x24 (their model runs counted apart)', eyes - (spent.get('model fr_eye') ?? 0));
  const stages = Object.fromEntries(
    [...spent].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Number((v / n).toFixed(2))]),
  );
  const modelsMs = [...spent].filter(([k]) => k.startsWith('model ')).reduce((s, [, v]) => s + v, 0) / n;
  const result = {
    benchmark: 'api-stages',
    backend,
    faces: n,
    machine: {
      cores: availableParallelism(),
      loadAverageBefore: loadBefore,
      loadAverageAfter: loadavg().map((x) => Number(x.toFixed(1))),
    },
    cpuMsPerFace: Number((total / n).toFixed(2)),
    modelsMsPerFace: Number(modelsMs.toFixed(2)),
    otherMsPerFace: Number((total / n - modelsMs).toFixed(2)),
    stagesMsPerFace: stages,
  };
  await runner.release();
  return result;
}
