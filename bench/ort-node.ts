/**
 * onnxruntime-node, the native baseline the face benchmark times onnxruntime-web against. It is installed in
 * tools/bench on first use (scripts/tool.mjs), not by the root install: benchmarks alone need its ~100 MB.
 * Its API is onnxruntime-common's, the same package onnxruntime-web re-exports, hence the types.
 */
import type * as OrtCommon from 'onnxruntime-common';
import { toolRequire } from '../scripts/tool.mjs';

export type OrtNode = typeof OrtCommon;
export type { InferenceSession as OrtNodeSession } from 'onnxruntime-common';

/** The onnxruntime-node module (installing tools/bench the first time). */
export function loadOrtNode(): OrtNode {
  return toolRequire('bench')('onnxruntime-node') as OrtNode;
}
