import type { FaceModelId } from '../../src/biometrics/face/runner.js';
import { nodeModelLoader } from '../../src/extraction/node-models.js';
import type { ModelLoader } from '../../src/extraction/ort-web-runner.js';
import { INT8_MODELS, int8File } from '../quantise-models.js';

/**
 * Loader giving the int8 build (scripts/quantise-models.ts; `suffix` as given to its --suffix) of `models`,
 * the float file of the others.
 */
export const int8Loader =
  (models: readonly FaceModelId[] = INT8_MODELS, suffix = '', base: ModelLoader = nodeModelLoader()): ModelLoader =>
  (file) => {
    const id = file.replace(/\.onnx$/, '') as FaceModelId;
    return models.includes(id) ? base(int8File(id).replace('.int8.', `.int8${suffix}.`)) : base(file);
  };
