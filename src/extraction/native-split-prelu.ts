/**
 * For the native backend only: every `PRelu(x, slope)` of an ONNX model with a constant float slope written as
 * `Relu(x) + Relu(-x) * (-slope)`, once, at load time (node-native-runner.ts).
 *
 * Why: onnxruntime-node runs its convolutions in the blocked NCHWc layout, but PRelu is not one of the
 * operators that layout has, so the tensors are reordered out of it and back around every PRelu: in the
 * embedding model (fr_feature) 5.4 ms of PRelu on reordered tensors plus 1.1 ms of reorders out of 11.9 ms.
 * Relu, Neg, Mul and Add stay inside NCHWc; measured (docs/extraction.md, scripts/quantise/onnx-prelu.ts):
 * fr_feature in 0.81 and fr_liveness in 0.90 of the time. onnxruntime-web has no NCHWc and runs the split
 * form 1.4x slower, so the wasm runner keeps the model as it is.
 *
 * The same value bit for bit: for x > 0, Relu(-x) is 0 and x + (+-0) is x; for x < 0, Relu(x) is 0 and
 * (-x) * (-slope) is x * slope exactly (negation is exact); the slope is negated by flipping sign bits. Only
 * the protobuf fields involved are decoded; anything else is copied byte for byte, and a PRelu whose slope is
 * not a float initializer in raw_data (or a model that is not the protobuf expected) is left as it was.
 */

import {
  concat,
  fields,
  graphOf,
  graphValueNames,
  header,
  initializersByName,
  nodeFields,
  onnxDomain,
  rewrittenOrSame,
  withGraphBody,
  type Field,
} from './onnx-protobuf.js';

const FLOAT = 1;
const encoder = new TextEncoder();

/** A string field (tag `no`, length-delimited). */
const stringField = (no: number, s: string) => {
  const b = encoder.encode(s);
  return concat([header(no, b.length), b]);
};

/** A NodeProto field of the graph: op_type with its inputs, outputs and name (no attributes, default domain). */
function nodeField(op: string, inputs: string[], outputs: string[], name: string): Uint8Array {
  const body = concat([
    ...inputs.map((i) => stringField(1, i)),
    ...outputs.map((o) => stringField(2, o)),
    stringField(3, name),
    stringField(4, op),
  ]);
  return concat([header(1, body.length), body]);
}

interface PRelu {
  field: Field;
  x: string;
  slope: string;
  output: string;
}

/** The PRelu node in `node` (a GraphProto.node field), or null for any other node. */
function preluOf(b: Uint8Array, node: Field): PRelu | null {
  const { op, domain, inputs, outputs, attributes } = nodeFields(b, node);
  if (op !== 'PRelu' || !onnxDomain(domain) || attributes.length || inputs.length !== 2 || outputs.length !== 1)
    return null;
  return { field: node, x: inputs[0]!, slope: inputs[1]!, output: outputs[0]! };
}

/** A float TensorProto `tensor` negated under a new name (dims kept), or null unless its data is raw floats. */
function negated(b: Uint8Array, tensor: Field, name: string): Uint8Array | null {
  const dims: Uint8Array[] = [];
  let raw: Field | null = null,
    type = -1;
  for (const f of fields(b, tensor.body, tensor.end)) {
    if (f.no === 1) dims.push(b.subarray(f.start, f.end));
    else if (f.no === 2 && f.wire === 0) type = f.value;
    else if (f.no === 9 && f.wire === 2) raw = f;
    else if (f.no === 4 || f.no === 13 || f.no === 14) return null; // float_data, external data or its location
  }
  if (type !== FLOAT || !raw || (raw.end - raw.body) % 4) return null;
  const data = b.slice(raw.body, raw.end);
  for (let i = 3; i < data.length; i += 4) data[i]! ^= 0x80; // little-endian floats: the sign bit is in the last byte
  const body = concat([...dims, Uint8Array.of(2 * 8, FLOAT), stringField(8, name), header(9, data.length), data]);
  return concat([header(5, body.length), body]);
}

/** The model with its constant-slope PRelus split (see above), or the same bytes when there is none. */
export function splitPRelu(model: Uint8Array): Uint8Array {
  return rewrittenOrSame(model, split);
}

function split(b: Uint8Array): Uint8Array | null {
  const model = graphOf(b);
  if (!model) return null;
  const { graph, parts } = model;
  const inits = initializersByName(b, parts);
  const graphInputs = graphValueNames(b, parts, [11]); // a graph input of the slope's name would override the initializer
  const replaced = new Map<Field, Uint8Array>();
  const added: Uint8Array[] = [];
  for (const f of parts) {
    if (f.no !== 1 || f.wire !== 2) continue;
    const p = preluOf(b, f);
    const init = p && !graphInputs.has(p.slope) ? inits.get(p.slope) : undefined;
    if (!p || !init) continue;
    const n = `${p.output}__split_prelu`;
    const negSlope = negated(b, init, `${n}_negslope`);
    if (!negSlope) continue;
    added.push(negSlope);
    replaced.set(
      f,
      concat([
        nodeField('Relu', [p.x], [`${n}_pos`], `${n}_relu`),
        nodeField('Neg', [p.x], [`${n}_negx`], `${n}_neg`),
        nodeField('Relu', [`${n}_negx`], [`${n}_negpart`], `${n}_relu_neg`),
        nodeField('Mul', [`${n}_negpart`, `${n}_negslope`], [`${n}_scaled`], `${n}_mul`),
        nodeField('Add', [`${n}_pos`, `${n}_scaled`], [p.output], `${n}_add`),
      ]),
    );
  }
  if (replaced.size === 0) return null;
  // Repeated fields may interleave: the new initializers go after everything else, the nodes stay in place.
  return withGraphBody(
    b,
    graph,
    concat([...parts.map((f) => replaced.get(f) ?? b.subarray(f.start, f.end)), ...added]),
  );
}
