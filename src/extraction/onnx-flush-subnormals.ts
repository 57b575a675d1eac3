/**
 * Sets the subnormal float32 weights of an ONNX model to zero, once, at load time.
 *
 * Why: four of the face models as fetched hold subnormal weights (fr_feature 8,938, fr_landmark 26,567,
 * fr_gender 13,331, fr_age 3,308), and an x86 CPU multiplies a subnormal through a slow microcode path unless
 * flush-to-zero is on, which neither onnxruntime-node by default nor WebAssembly (no such mode) have. Measured in
 * one run (CPU ms per inference, as fetched -> flushed): fr_feature wasm 60.8 -> 44.3, native 76.5 -> 20.3;
 * fr_gender wasm 14.4 -> 3.3, native 20.7 -> 0.9. A subnormal weight is below 1.2e-38: its products vanish in
 * sums of normal values, so the outputs are unchanged (test: embeddings of real photos bit-identical), the
 * templates too, and no template version changes.
 *
 * The model's size does not change (a float is replaced by 0.0 in place), so the rewrite is a copy of the bytes
 * with those floats zeroed: float initializers of the main graph, in `raw_data` or packed `float_data`.
 * Anything unexpected leaves the model as it was: onnxruntime then judges the original.
 */
import { fields, graphOf, rewrittenOrSame, type Field } from './onnx-protobuf.js';

const FLOAT = 1;
/** The smallest positive normal float32; non-zero magnitudes below it are subnormal. */
const FLT_MIN = 2 ** -126;

/** The model with its subnormal float weights set to zero (a copy), or the same bytes when it has none. */
export function flushSubnormalWeights(model: Uint8Array): Uint8Array {
  return rewrittenOrSame(model, flush);
}

function flush(b: Uint8Array): Uint8Array | null {
  let out: Uint8Array | null = null;
  const model = graphOf(b);
  if (!model) return null;
  for (const part of model.parts) {
    if (part.no !== 5 || part.wire !== 2) continue; // GraphProto.initializer
    const data = floatDataOf(b, part);
    if (!data || (data.end - data.body) % 4) continue;
    const view = new DataView(b.buffer, b.byteOffset + data.body, data.end - data.body);
    for (let i = 0; i < view.byteLength; i += 4) {
      const value = view.getFloat32(i, true);
      if (value === 0 || Math.abs(value) >= FLT_MIN || Number.isNaN(value)) continue;
      out ??= b.slice();
      new DataView(out.buffer, out.byteOffset + data.body + i, 4).setFloat32(0, 0, true);
    }
  }
  return out;
}

/** The bytes of a float TensorProto's values (raw_data, or packed float_data), or null for any other tensor. */
function floatDataOf(b: Uint8Array, tensor: Field): Field | null {
  let type = -1;
  let data: Field | null = null;
  for (const f of fields(b, tensor.body, tensor.end)) {
    if (f.no === 2 && f.wire === 0)
      type = f.value; // data_type
    else if ((f.no === 9 || f.no === 4) && f.wire === 2)
      data = f; // raw_data, packed float_data
    else if (f.no === 13 || f.no === 14) return null; // external data: not in these bytes
  }
  return type === FLOAT ? data : null;
}
