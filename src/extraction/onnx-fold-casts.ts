/**
 * Replaces `Cast(float16 initializer) -> float32` nodes of an ONNX model by float32 initializers, once, at
 * load time.
 *
 * Why: the voice encoder keeps its weights as float16 and casts them to float32 in the graph.
 * onnxruntime-web 1.30's graph optimisation (level 'all') does not fold those Casts away: with them every
 * session.run costs about 12 ms more whatever the batch (one partial: 25.6 against 13.3 ms of CPU; eight:
 * 13.1 against 12.5 ms each), the weights being converted again and the LSTM kernels not seeing constant
 * weights they could prepack. float16 -> float32 is exact, so the outputs are bit-identical.
 * onnxruntime-web cannot save its optimised model (no optimizedModelFilePath), hence this rewrite.
 *
 * Only the protobuf fields involved are decoded (ModelProto.graph, GraphProto.node/initializer, NodeProto,
 * AttributeProto, TensorProto); everything else is copied byte for byte. Anything unexpected (float16 data
 * not in raw_data, external data, subgraphs, an initializer that is also a graph input or feeds another node)
 * leaves that Cast, or the whole model, as it was: the result is always a model that computes the same thing.
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
  text,
  withGraphBody,
  type Field,
} from './onnx-protobuf.js';

const FLOAT = 1;
const FLOAT16 = 10;

/**
 * IEEE half -> single bits, exactly (every float16 is a float32): normal numbers by moving the fields and
 * rebiasing the exponent (a few integer operations; the arithmetic form took 70 ms for this model's 1.4 M
 * weights), zeros, subnormals, infinities and NaNs by value.
 */
export function halfToFloatBits(h: number, scratch = new DataView(new ArrayBuffer(4))): number {
  const exp = (h >> 10) & 0x1f;
  if (exp !== 0 && exp !== 31) return (((h & 0x8000) << 16) | ((exp + 112) << 23) | ((h & 0x3ff) << 13)) >>> 0;
  const sign = h & 0x8000 ? -1 : 1,
    mant = h & 0x3ff;
  scratch.setFloat32(0, exp === 0 ? sign * mant * 2 ** -24 : mant ? NaN : sign * Infinity);
  return scratch.getUint32(0);
}

interface CastNode {
  field: Field;
  input: string;
  output: string;
}

/** A Cast to float of one value, or null for any other node. */
function castOf(b: Uint8Array, node: Field): CastNode | null {
  const { op, domain, inputs, outputs, attributes } = nodeFields(b, node);
  let to = -1,
    subgraph = false;
  for (const attribute of attributes) {
    if (attribute.wire !== 2) continue;
    let name = '',
      i = -1;
    for (const a of fields(b, attribute.body, attribute.end)) {
      if (a.no === 1 && a.wire === 2) name = text(b, a);
      else if (a.no === 3 && a.wire === 0) i = a.value;
      else if (a.no === 6 || a.no === 11) subgraph = true;
    }
    if (name === 'to') to = i;
  }
  if (subgraph) throw new Error('subgraphs are not handled');
  if (op !== 'Cast' || !onnxDomain(domain) || to !== FLOAT || inputs.length !== 1 || outputs.length !== 1) return null;
  return { field: node, input: inputs[0]!, output: outputs[0]! };
}

/** The float32 TensorProto replacing a raw float16 one: same dims and other fields, new name and data. */
function widened(b: Uint8Array, tensor: Field, name: string): Uint8Array | null {
  const kept: Uint8Array[] = [];
  let raw: Field | null = null,
    type = -1;
  for (const f of fields(b, tensor.body, tensor.end)) {
    if (f.no === 2 && f.wire === 0) type = f.value;
    else if (f.no === 9 && f.wire === 2) raw = f;
    else if (f.no === 8) continue;
    else if (f.no === 5 || f.no === 13 || f.no === 14)
      return null; // int32_data, external data or location
    else kept.push(b.subarray(f.start, f.end));
  }
  if (type !== FLOAT16 || !raw || (raw.end - raw.body) % 2) return null;
  const n = (raw.end - raw.body) / 2;
  const data = new Uint8Array(n * 4);
  const src = new DataView(b.buffer, b.byteOffset + raw.body, n * 2),
    dst = new DataView(data.buffer);
  const scratch = new DataView(new ArrayBuffer(4));
  for (let i = 0; i < n; i++) dst.setUint32(i * 4, halfToFloatBits(src.getUint16(i * 2, true), scratch), true);
  const nameBytes = new TextEncoder().encode(name);
  const body = concat([
    ...kept,
    Uint8Array.of(2 * 8, FLOAT),
    header(8, nameBytes.length),
    nameBytes,
    header(9, data.length),
    data,
  ]);
  return concat([header(5, body.length), body]);
}

/** The model with its float16-initializer Casts folded, or the same bytes when there is nothing to fold. */
export function foldHalfCasts(model: Uint8Array): Uint8Array {
  return rewrittenOrSame(model, fold);
}

function fold(b: Uint8Array): Uint8Array | null {
  const model = graphOf(b);
  if (!model) return null;
  const { graph, parts } = model;
  const inits = initializersByName(b, parts);
  const graphIo = graphValueNames(b, parts, [11, 12]); // graph inputs may override an initializer; outputs must stay node outputs
  const uses = new Map<string, number>();
  const casts: CastNode[] = [];
  for (const f of parts) {
    if (f.no === 1 && f.wire === 2) {
      for (const n of fields(b, f.body, f.end))
        if (n.no === 1 && n.wire === 2) {
          const i = text(b, n);
          uses.set(i, (uses.get(i) ?? 0) + 1);
        }
      const c = castOf(b, f);
      if (c) casts.push(c);
    }
  }
  const replaced = new Map<Field, Uint8Array | null>(); // initializer or node field -> replacement (null: drop)
  for (const c of casts) {
    const init = inits.get(c.input);
    if (!init || graphIo.has(c.input) || graphIo.has(c.output) || uses.get(c.input) !== 1 || inits.has(c.output))
      continue;
    const wide = widened(b, init, c.output);
    if (!wide) continue;
    replaced.set(init, wide);
    replaced.set(c.field, null);
  }
  if (replaced.size === 0) return null;
  const graphBody = concat(
    parts.map((f) => (replaced.has(f) ? (replaced.get(f) ?? new Uint8Array(0)) : b.subarray(f.start, f.end))),
  );
  return withGraphBody(b, graph, graphBody);
}
