// The stage-by-stage timing of a face analysis that `bench -- api-stages` (an enrolment's photo) and `bench --
// capture --frame-stages` (a capture's frame) share: the pipeline's own functions called in analyseImage's order
// (pipeline.ts, attributes.ts), each step's process CPU summed under its name, the model runs counted apart from
// their crops. Process CPU hardly moves with the machine's other load, unlike wall time.
import { decodeImage } from '../src/biometrics/image/decode.js';
import { toPlanar } from '../src/biometrics/image/planes.js';
import { decodeDetections, detectInput, DETECT_H, DETECT_W } from '../src/biometrics/face/detect.js';
import { alignFace, landmarkInput, squareBox } from '../src/biometrics/face/pipeline.js';
import { ageGender, eyesOpen, liveness, poseInput } from '../src/biometrics/face/attributes.js';
import type { AnalyseOptions } from '../src/biometrics/face/analysis.js';
import { brightness, sharpness } from '../src/biometrics/checks.js';
import type { FaceModelId, ModelRunner } from '../src/biometrics/face/runner.js';
import { enableFastJpegNode, nodeModelLoader } from '../src/extraction/node-models.js';
import { OrtWebRunner } from '../src/extraction/ort-web-runner.js';
import { ensureTool } from '../scripts/tool.mjs';

/** This process's CPU so far, in ms (every thread). */
export const cpu = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

/** The --backend option's value, checked. */
export function extractionBackend(value: string | undefined): 'wasm' | 'native' {
  if (value !== 'native' && value !== 'wasm') throw new Error('--backend takes native or wasm');
  return value;
}

/** A model runner of the backend, one thread, inline (onnxruntime-node installed into tools/bench when asked for). */
export async function benchRunner(backend: 'wasm' | 'native'): Promise<ModelRunner> {
  if (backend === 'native') ensureTool('bench');
  await enableFastJpegNode();
  return backend === 'native'
    ? await (await import('../src/extraction/node-native-runner.js')).OrtNodeRunner.create({
        loadModel: nodeModelLoader(),
      })
    : await OrtWebRunner.create({ loadModel: nodeModelLoader() });
}

const EYE_CROPS = 'eye crops 2 x 24x24 (their model runs counted apart)';
const LIVENESS_CROP = 'liveness crop 128x128 + planes (its model run counted apart)';
const AGE_CROP = 'age/gender crop 64x64 + planes (their model runs counted apart)';
/** The crop steps whose time includes their model runs (timed inside them too). */
const CROPS_AROUND_MODELS: [string, FaceModelId[]][] = [
  [EYE_CROPS, ['fr_eye']],
  [LIVENESS_CROP, ['fr_liveness']],
  [AGE_CROP, ['fr_age', 'fr_gender']],
];

/** CPU ms spent per stage, and the pipeline's steps timed into it. */
export function faceStages(runner: ModelRunner) {
  const spent = new Map<string, number>();
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
  /**
   * The steps of one image's analysis with `options` (checks, liveness, attributes as analyseImage reads them),
   * for its first face; false when no face is found (a 640x480 frame or a portrait: not framed).
   */
  const analyse = async (bytes: Uint8Array, options: AnalyseOptions): Promise<boolean> => {
    const img = await timed('decode (mozjpeg, RGBA -> RGB)', () => decodeImage(bytes));
    const input = await timed('detector input: area resize + planes', () => detectInput(img));
    const det = await models.run('fr_detect', input, [1, 3, DETECT_H, DETECT_W]);
    const d = decodeDetections(det.scores!, det.boxes!, img.width, img.height)[0];
    if (!d) return false;
    const box = squareBox(d);
    const crop = await timed('landmark crop 64x64 + grey', () => landmarkInput(img, box));
    const out = (await models.run('fr_landmark', crop, [1, 1, 64, 64])).output!;
    const lm = new Float32Array(136);
    for (let i = 0; i < 136; i++) lm[i] = out[i]! * box.side + (i % 2 ? box.y : box.x);
    const aligned = await timed('alignment warp 112x112', () => alignFace(img, lm));
    const planar = await timed('embedding input: planes', () =>
      toPlanar(aligned, [127, 127, 127], [128, 128, 128], 'BGR'),
    );
    await models.run('fr_feature', planar, [1, 3, 112, 112]);
    await timed('sharpness + brightness', () => [sharpness(aligned), brightness(aligned)]);
    if (options.checks === false) return true;
    const pose = await timed('pose crop 224x224 + planes', () => poseInput(img, box));
    await models.run('fr_pose', pose, [1, 3, 224, 224]);
    await timed(EYE_CROPS, () => eyesOpen(models, img, lm));
    if (options.liveness) await timed(LIVENESS_CROP, () => liveness(models, img, box));
    if (options.attributes) await timed(AGE_CROP, () => ageGender(models, img, box));
    return true;
  };
  /** The stages' totals with each crop's model runs taken out of it (they stay under their models). */
  const totals = (): Map<string, number> => {
    const apart = new Map(spent);
    for (const [stage, ids] of CROPS_AROUND_MODELS)
      if (apart.has(stage))
        apart.set(stage, apart.get(stage)! - ids.reduce((s, id) => s + (apart.get(`model ${id}`) ?? 0), 0));
    return apart;
  };
  return { spent, models, analyse, totals };
}
