/** Identifiers of the face models listed in wasm/models/manifest.json. */
export type FaceModelId =
  | 'fr_detect'
  | 'fr_landmark'
  | 'fr_feature'
  | 'fr_liveness'
  | 'fr_eye'
  | 'fr_pose'
  | 'fr_age'
  | 'fr_gender';

/** All models, in the order they are loaded. */
export const FACE_MODELS: readonly FaceModelId[] = [
  'fr_detect',
  'fr_landmark',
  'fr_feature',
  'fr_liveness',
  'fr_eye',
  'fr_pose',
  'fr_age',
  'fr_gender',
];

/** The models needed for a template (detect + landmarks + embedding). */
export const TEMPLATE_MODELS: readonly FaceModelId[] = ['fr_detect', 'fr_landmark', 'fr_feature'];

/**
 * Runs one ONNX model on one float32 tensor named `input`. The face pipeline depends only on this, so the
 * same pre- and post-processing runs on onnxruntime-web (the default, every runtime) and on
 * onnxruntime-node (BIMS_EXTRACTION_BACKEND=native on Node hosts, and the benchmark's native baseline).
 */
export interface ModelRunner {
  run(model: FaceModelId, input: Float32Array, dims: readonly number[]): Promise<Record<string, Float32Array>>;
  /** Releases every session. */
  release(): Promise<void>;
}
