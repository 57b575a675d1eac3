// npm run quantise-models -- [--models fr_detect,fr_feature,...] [--quantile Q] [--photos DIR,DIR]
// Builds int8 versions of the convolution-heavy face models (wasm/models/<id>.int8.onnx) from the fetched float
// models: QLinearConv with per-channel int8 weights, uint8 activations calibrated on photos the project fetches
// (scripts/fetch-test-photos.mjs) that are not in the labelled evaluation sets: the dlib and face-api group
// photos. Run at install/build time, never by the service. docs/extraction.md ("int8") has what it gave.
import { writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FACE_MODELS, type FaceModelId } from '../src/biometrics/face/runner.js';
import { MODELS_DIR } from '../src/extraction/node-models.js';
import { configureEnv } from '../src/extraction/ort-web-runner.js';
import { activationRanges, captureInputs, loadInputs, photosIn, saveInputs } from './quantise/calibration.js';
import { quantiseModel, tensorsToCalibrate, withIntermediateOutputs, type ConvInfo } from './quantise/onnx-int8.js';

/** Models worth quantising: most of their time is in convolutions (fr_eye, fr_age, fr_gender are tiny). */
export const INT8_MODELS: readonly FaceModelId[] = ['fr_detect', 'fr_landmark', 'fr_feature', 'fr_liveness', 'fr_pose'];
/** Calibration photos: fetched by scripts/fetch-test-photos.mjs, in neither labelled evaluation set. */
export const CALIBRATION_DIRS = ['test/fixtures/photos/dlib', 'test/fixtures/photos/faceapi'];

/** The int8 file name of a model file ('fr_detect.onnx' -> 'fr_detect.int8.onnx'). */
/** Where the captured calibration inputs are kept (the benchmark and the test reuse them). */
export const CAPTURE_DIR = '.cache/int8';

export const int8File = (id: FaceModelId) => `${id}.int8.onnx`;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const models = (arg('models')?.split(',') ?? INT8_MODELS) as FaceModelId[];
  for (const id of models) if (!FACE_MODELS.includes(id)) throw new Error(`unknown model ${id}`);
  const quantile = Number(arg('quantile') ?? 0);
  // --pointwise: only 1x1 convolutions (the kind the float wasm build is slowest at, issue 19).
  const filter = process.argv.includes('--pointwise')
    ? (c: ConvInfo) => c.group === 1 && c.kernel.every((k) => k === 1)
    : undefined;
  const suffix = arg('suffix') ?? '';
  const photos = photosIn(arg('photos')?.split(',') ?? CALIBRATION_DIRS);
  if (photos.length === 0)
    throw new Error(
      `no calibration photos in ${CALIBRATION_DIRS.join(', ')}: run \`node scripts/fetch-test-photos.mjs\``,
    );
  configureEnv({});
  const t0 = performance.now();
  const inputs = process.argv.includes('--reuse-inputs')
    ? new Map(models.map((m) => [m, loadInputs(CAPTURE_DIR, m) ?? []]))
    : await captureInputs(photos);
  if (!process.argv.includes('--reuse-inputs')) saveInputs(CAPTURE_DIR, inputs);
  console.log(
    `quantise-models: ${photos.length} photos, inputs captured: ${models.map((m) => `${m} ${inputs.get(m)!.length}`).join(', ')} (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
  );
  for (const id of models) {
    const float = new Uint8Array(readFileSync(join(MODELS_DIR, `${id}.onnx`)));
    const names = tensorsToCalibrate(float, filter);
    const ranges = await activationRanges(withIntermediateOutputs(float, names), names, inputs.get(id)!, quantile);
    const int8 = quantiseModel(float, { ranges, filter });
    const out = int8File(id).replace('.int8.', `.int8${suffix}.`);
    writeFileSync(join(MODELS_DIR, out), int8);
    console.log(
      `quantise-models: wrote wasm/models/${out} (${int8.length} bytes, ${names.length} calibrated tensors, from ${float.length})`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e) => {
    console.error(`quantise-models: FAILED: ${(e as Error).stack}`);
    process.exitCode = 1;
  });
}
