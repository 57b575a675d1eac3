/**
 * The few protobuf primitives the ONNX rewrites of this folder need (onnx-fold-casts.ts,
 * onnx-flush-subnormals.ts, native-split-prelu.ts): walking the fields of a message without decoding the rest, so that everything a
 * rewrite does not touch is copied byte for byte.
 */

export interface Field {
  no: number;
  wire: number;
  start: number;
  body: number;
  end: number;
  value: number;
}

export function* fields(b: Uint8Array, from: number, to: number): Generator<Field> {
  let p = from;
  while (p < to) {
    const start = p;
    let tag: number;
    [tag, p] = varint(b, p);
    const no = Math.floor(tag / 8),
      wire = tag & 7;
    let value = 0,
      body = p;
    if (wire === 0) [value, p] = varint(b, p);
    else if (wire === 1) p += 8;
    else if (wire === 5) p += 4;
    else if (wire === 2) {
      [value, body] = varint(b, p);
      p = body + value;
    } else throw new Error(`protobuf wire type ${wire}`);
    if (p > to) throw new Error('truncated protobuf');
    yield { no, wire, start, body, end: p, value };
  }
}

/** Varints up to 2^53 (lengths, enums, small ints); larger values never matter here. */
function varint(b: Uint8Array, p: number): [number, number] {
  let v = 0,
    scale = 1;
  for (;;) {
    if (p >= b.length) throw new Error('truncated varint');
    const c = b[p++]!;
    v += (c & 0x7f) * scale;
    if (!(c & 0x80)) return [v, p];
    scale *= 128;
  }
}

function putVarint(out: number[], v: number): void {
  while (v >= 128) {
    out.push((v % 128) | 128);
    v = Math.floor(v / 128);
  }
  out.push(v);
}

/** Tag and length prefix of a length-delimited field. */
export function header(no: number, length: number): Uint8Array {
  const h: number[] = [];
  putVarint(h, no * 8 + 2);
  putVarint(h, length);
  return Uint8Array.from(h);
}

export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const utf8 = new TextDecoder();
export const text = (b: Uint8Array, f: Field) => utf8.decode(b.subarray(f.body, f.end));

/**
 * A load-time model rewrite: `rewrite` answers the new bytes, or null when there is nothing to change. Bytes that
 * are not the protobuf a rewrite expects come back as they are: onnxruntime judges the original.
 */
export function rewrittenOrSame(model: Uint8Array, rewrite: (b: Uint8Array) => Uint8Array | null): Uint8Array {
  try {
    return rewrite(model) ?? model;
  } catch {
    return model;
  }
}

/** ModelProto.graph (field 7) and its fields in order, or null when the model has none. */
export function graphOf(b: Uint8Array): { graph: Field; parts: Field[] } | null {
  const graph = [...fields(b, 0, b.length)].find((f) => f.no === 7 && f.wire === 2);
  return graph ? { graph, parts: [...fields(b, graph.body, graph.end)] } : null;
}

/** The model with its graph's body replaced; every other field of the ModelProto copied byte for byte. */
export function withGraphBody(b: Uint8Array, graph: Field, body: Uint8Array): Uint8Array {
  const out: Uint8Array[] = [];
  for (const f of fields(b, 0, b.length))
    out.push(f.start === graph.start ? concat([header(7, body.length), body]) : b.subarray(f.start, f.end));
  return concat(out);
}

/** GraphProto.initializer fields (5) by their TensorProto.name (8). */
export function initializersByName(b: Uint8Array, parts: Field[]): Map<string, Field> {
  const inits = new Map<string, Field>();
  for (const f of parts) {
    if (f.no !== 5 || f.wire !== 2) continue;
    for (const t of fields(b, f.body, f.end)) if (t.no === 8 && t.wire === 2) inits.set(text(b, t), f);
  }
  return inits;
}

/** The value names of the ValueInfoProto fields numbered `numbers` (11: graph inputs, 12: graph outputs). */
export function graphValueNames(b: Uint8Array, parts: Field[], numbers: number[]): Set<string> {
  const names = new Set<string>();
  for (const f of parts) {
    if (!numbers.includes(f.no) || f.wire !== 2) continue;
    for (const v of fields(b, f.body, f.end)) if (v.no === 1 && v.wire === 2) names.add(text(b, v));
  }
  return names;
}

/** A NodeProto's operator, domain, inputs, outputs and attribute fields, read once for any rewrite. */
interface NodeFields {
  op: string;
  domain: string;
  inputs: string[];
  outputs: string[];
  attributes: Field[];
}

/** The fields of the NodeProto `node` (a GraphProto.node field) a rewrite decides by. */
export function nodeFields(b: Uint8Array, node: Field): NodeFields {
  const read: NodeFields = { op: '', domain: '', inputs: [], outputs: [], attributes: [] };
  for (const f of fields(b, node.body, node.end)) {
    if (f.no === 1 && f.wire === 2) read.inputs.push(text(b, f));
    else if (f.no === 2 && f.wire === 2) read.outputs.push(text(b, f));
    else if (f.no === 4 && f.wire === 2) read.op = text(b, f);
    else if (f.no === 7 && f.wire === 2) read.domain = text(b, f);
    else if (f.no === 5) read.attributes.push(f);
  }
  return read;
}

/** Whether a node's domain is the default ONNX one. */
export const onnxDomain = (domain: string) => domain === '' || domain === 'ai.onnx';
