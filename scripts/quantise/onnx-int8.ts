// int8 rewrite of a float ONNX model for onnxruntime's CPU kernels (the wasm build included): every Conv whose
// weights are an initializer becomes a QLinearConv (uint8 activations, per-tensor asymmetric; int8 weights,
// per output channel symmetric; int32 bias), with QuantizeLinear/DequantizeLinear only where a float operator
// sits between two convolutions. A Relu right after a Conv is folded into the QLinearConv's output range
// (zero point 0: uint8 saturation at 0 is the Relu). Operator ("QOperator") form rather than QDQ pairs: the face
// models are opset 9 and QLinearConv with per-channel weight scales exists from opset 10. The model is moved to
// opset 11 (with 10, onnxruntime's basic graph optimisations insert a Round, an opset-11 operator, and the
// session fails); 9 -> 11 changes Slice and Pad (attributes -> inputs), rewritten here, and Clip, Upsample,
// TopK, Resize, which the face models do not use (refused). QDQ pairs with per-channel weights need opset 13,
// which would also change Softmax, Split and Unsqueeze.
//
// Calibration: `withIntermediateOutputs` returns the model with every tensor a QLinearConv will read or write
// exposed as a graph output; running it on real inputs gives the ranges `quantiseModel` takes.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = protobuf.parse(readFileSync(join(here, 'onnx.proto'), 'utf8'), { keepCase: false }).root;
const ModelProto = root.lookupType('onnx.ModelProto');

// TensorProto.DataType and AttributeProto.AttributeType values (onnx.proto).
const FLOAT = 1,
  UINT8 = 2,
  INT8 = 3,
  INT32 = 6,
  INT64 = 7;

interface Tensor {
  name: string;
  dims: (number | { toNumber(): number })[];
  dataType: number;
  rawData?: Uint8Array;
  floatData?: number[];
  int64Data?: unknown[];
}
interface Attribute {
  name: string;
  type?: number;
  i?: unknown;
  ints?: unknown[];
  f?: number;
}
interface Node {
  input: string[];
  output: string[];
  name?: string;
  opType: string;
  domain?: string;
  attribute: Attribute[];
}
interface ValueInfo {
  name: string;
  type?: unknown;
}
interface Graph {
  node: Node[];
  initializer: Tensor[];
  input: ValueInfo[];
  output: ValueInfo[];
  valueInfo: ValueInfo[];
}
interface Model {
  irVersion: unknown;
  opsetImport: { domain?: string; version: unknown }[];
  graph: Graph;
}

/** Observed range of one tensor over the calibration inputs. */
export interface Range {
  min: number;
  max: number;
}

const num = (v: unknown) => (typeof v === 'number' ? v : Number(String(v)));

function decode(bytes: Uint8Array): Model {
  return ModelProto.toObject(ModelProto.decode(bytes), {
    longs: Number,
    arrays: true,
    defaults: false,
  }) as unknown as Model;
}
function encode(model: Model): Uint8Array {
  return ModelProto.encode(ModelProto.fromObject(model)).finish();
}

function floatsOf(t: Tensor): Float32Array {
  if (t.dataType !== FLOAT) throw new Error(`initializer ${t.name} is not float32`);
  // A copy with its own buffer (a Node Buffer's slice() is a view on the whole file).
  if (t.rawData && t.rawData.length) return new Float32Array(Uint8Array.from(t.rawData).buffer);
  return Float32Array.from(t.floatData ?? []);
}

function tensor(name: string, dataType: number, dims: number[], data: ArrayBufferView): Tensor {
  return {
    name,
    dataType,
    dims,
    rawData: new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)),
  };
}
const scalarF = (name: string, v: number) => tensor(name, FLOAT, [], Float32Array.of(v));
const scalarU8 = (name: string, v: number) => tensor(name, UINT8, [], Uint8Array.of(v));
const floatOutput = (name: string): ValueInfo => ({ name, type: { tensorType: { elemType: FLOAT } } });

/** Consumers of every tensor name. */
function consumers(g: Graph): Map<string, Node[]> {
  const m = new Map<string, Node[]>();
  for (const n of g.node) for (const i of n.input) if (i) m.set(i, [...(m.get(i) ?? []), n]);
  return m;
}

/** What decides whether one Conv is quantised (all quantisable ones by default). */
export interface ConvInfo {
  name: string;
  group: number;
  kernel: number[];
  outChannels: number;
}
export type ConvFilter = (c: ConvInfo) => boolean;

function convInfo(n: Node, g: Graph): ConvInfo {
  const w = g.initializer.find((t) => t.name === n.input[1])!;
  const a = (k: string) => n.attribute.find((x) => x.name === k);
  return {
    name: n.name ?? n.output[0]!,
    group: num(a('group')?.i ?? 1),
    kernel: (a('kernel_shape')?.ints ?? w.dims.slice(2)).map(num),
    outChannels: num(w.dims[0]),
  };
}

/** The Conv nodes this rewrite handles: weights (and bias) are initializers that no graph input overrides. */
function quantisableConvs(g: Graph, filter: ConvFilter = () => true): Node[] {
  const inits = new Set(g.initializer.map((t) => t.name));
  const inputs = new Set(g.input.map((v) => v.name));
  return g.node
    .filter(
      (n) =>
        n.opType === 'Conv' &&
        (!n.domain || n.domain === 'ai.onnx') &&
        inits.has(n.input[1]!) &&
        !inputs.has(n.input[1]!) &&
        (!n.input[2] || (inits.has(n.input[2]) && !inputs.has(n.input[2]))),
    )
    .filter((n) => filter(convInfo(n, g)));
}

/** A Relu that is a Conv's only consumer (and not a graph output itself): its output is what gets quantised. */
function foldedRelu(g: Graph, conv: Node, uses: Map<string, Node[]>, graphOutputs: Set<string>): Node | undefined {
  const out = conv.output[0]!;
  const c = uses.get(out) ?? [];
  if (graphOutputs.has(out) || c.length !== 1 || c[0]!.opType !== 'Relu') return undefined;
  return c[0];
}

/** Names of the tensors whose ranges `quantiseModel` needs: each Conv's input and (Relu-folded) output. */
export function tensorsToCalibrate(bytes: Uint8Array, filter?: ConvFilter): string[] {
  const m = decode(bytes);
  const g = m.graph;
  const uses = consumers(g);
  const outs = new Set(g.output.map((o) => o.name));
  const names = new Set<string>();
  for (const c of quantisableConvs(g, filter)) {
    names.add(c.input[0]!);
    names.add((foldedRelu(g, c, uses, outs) ?? c).output[0]!);
  }
  return [...names];
}

/** The model with `names` added as float graph outputs (for calibration runs). */
export function withIntermediateOutputs(bytes: Uint8Array, names: readonly string[]): Uint8Array {
  const m = decode(bytes);
  const have = new Set(m.graph.output.map((o) => o.name));
  for (const n of names) if (!have.has(n)) m.graph.output.push(floatOutput(n));
  return encode(m);
}

/** uint8 asymmetric parameters covering [min, max] and 0 (zero must be exact: padding and Relu). */
export function uint8Params(r: Range): { scale: number; zeroPoint: number } {
  const lo = Math.min(0, r.min),
    hi = Math.max(0, r.max);
  const scale = hi > lo ? (hi - lo) / 255 : 1;
  return { scale, zeroPoint: Math.max(0, Math.min(255, Math.round(-lo / scale))) };
}

/** Slice-1 (starts/ends/axes attributes) as Slice-10 (the same as int64 initializer inputs). */
function upgradeSlice(n: Node, g: Graph, k: number): void {
  const ints = (a: string) => n.attribute.find((x) => x.name === a)?.ints?.map(num);
  const starts = ints('starts'),
    ends = ints('ends'),
    axes = ints('axes');
  if (!starts || !ends) return; // already opset-10 style
  const add = (suffix: string, v: number[]) => {
    const name = `${n.output[0]}__slice10_${suffix}_${k}`;
    g.initializer.push(
      tensor(
        name,
        INT64,
        [v.length],
        BigInt64Array.from(v.map((x) => BigInt(Math.max(Math.min(x, 2 ** 62), -(2 ** 62))))),
      ),
    );
    return name;
  };
  n.input = [n.input[0]!, add('starts', starts), add('ends', ends), ...(axes ? [add('axes', axes)] : [])];
  n.attribute = [];
}

/** Pad-2 (pads and value attributes) as Pad-11 (the same as inputs; only the constant mode keeps a value). */
function upgradePad(n: Node, g: Graph, k: number): void {
  const pads = n.attribute.find((x) => x.name === 'pads')?.ints?.map(num);
  if (!pads) return;
  const value = n.attribute.find((x) => x.name === 'value')?.f ?? 0;
  const name = `${n.output[0]}__pad11_${k}`;
  g.initializer.push(
    tensor(`${name}_pads`, INT64, [pads.length], BigInt64Array.from(pads.map(BigInt))),
    scalarF(`${name}_value`, value),
  );
  n.input = [n.input[0]!, `${name}_pads`, `${name}_value`];
  n.attribute = n.attribute.filter((x) => x.name === 'mode');
}

/** Options of `quantiseModel`. */
export interface QuantiseOptions {
  /** Per-tensor ranges from calibration (names from `tensorsToCalibrate`). */
  ranges: ReadonlyMap<string, Range>;
  /** Which convolutions to quantise (default: every one with constant weights). */
  filter?: ConvFilter;
}

/**
 * The int8 model: QLinearConv for every quantisable Conv, activations quantised with the calibrated ranges.
 * @throws when a needed range is missing or the model has ops this rewrite does not know how to move to opset 10.
 */
export function quantiseModel(bytes: Uint8Array, opts: QuantiseOptions): Uint8Array {
  const m = decode(bytes);
  const g = m.graph;
  const onnxOpset = m.opsetImport.find((o) => !o.domain || o.domain === 'ai.onnx');
  const from = onnxOpset ? num(onnxOpset.version) : 0;
  if (from < 7 || from > 11) throw new Error(`expected an opset 7 to 11 model, got ${from || 'none'}`);
  if (from < 11) {
    const risky = g.node.filter((n) => ['Upsample', 'TopK', 'Clip', 'Resize', 'Scan'].includes(n.opType));
    if (risky.length) throw new Error(`opset 11 changes ${risky[0]!.opType}: not handled`);
    g.node.forEach((n, k) => {
      if (n.opType === 'Slice' && from < 10) upgradeSlice(n, g, k);
      if (n.opType === 'Pad') upgradePad(n, g, k);
    });
  }
  onnxOpset!.version = 11;
  if (num(m.irVersion) < 5) m.irVersion = 5;

  const inits = new Map(g.initializer.map((t) => [t.name, t]));
  const uses = consumers(g);
  const graphOutputs = new Set(g.output.map((o) => o.name));
  const convs = quantisableConvs(g, opts.filter);
  const range = (name: string) => {
    const r = opts.ranges.get(name);
    if (!r) throw new Error(`no calibration range for ${name}`);
    return r;
  };

  // Which float tensors are read by a QLinearConv (need a quantised twin) and which a QLinearConv writes.
  const qParams = new Map<string, { scale: number; zeroPoint: number; q: string; s: string; z: string }>();
  const added: Tensor[] = [];
  const paramsOf = (name: string, r: Range) => {
    let p = qParams.get(name);
    if (!p) {
      const { scale, zeroPoint } = uint8Params(r);
      p = { scale, zeroPoint, q: `${name}__u8`, s: `${name}__scale`, z: `${name}__zp` };
      added.push(scalarF(p.s, scale), scalarU8(p.z, zeroPoint));
      qParams.set(name, p);
    }
    return p;
  };
  const producedByQConv = new Set<string>();
  const replace = new Map<Node, Node[]>(); // node -> nodes in its place (empty: removed)
  const droppedInits = new Set<string>();

  for (const conv of convs) {
    const x = conv.input[0]!;
    const relu = foldedRelu(g, conv, uses, graphOutputs);
    const y = (relu ?? conv).output[0]!;
    const xp = paramsOf(x, range(x));
    const yr = range(y);
    const yp = paramsOf(y, relu ? { min: 0, max: yr.max } : yr);
    producedByQConv.add(y);

    const w = inits.get(conv.input[1]!)!;
    const dims = w.dims.map(num);
    const wf = floatsOf(w);
    const M = dims[0]!,
      per = wf.length / M;
    const wq = new Int8Array(wf.length),
      ws = new Float32Array(M);
    for (let o = 0; o < M; o++) {
      let amax = 0;
      for (let i = 0; i < per; i++) amax = Math.max(amax, Math.abs(wf[o * per + i]!));
      const s = amax > 0 ? amax / 127 : 1;
      ws[o] = s;
      for (let i = 0; i < per; i++) wq[o * per + i] = Math.max(-127, Math.min(127, Math.round(wf[o * per + i]! / s)));
    }
    const base = conv.output[0]!;
    added.push(
      tensor(`${base}__w_i8`, INT8, dims, wq),
      tensor(`${base}__w_scale`, FLOAT, [M], ws),
      tensor(`${base}__w_zp`, INT8, [M], new Int8Array(M)),
    );
    const inputs = [xp.q, xp.s, xp.z, `${base}__w_i8`, `${base}__w_scale`, `${base}__w_zp`, yp.s, yp.z];
    if (conv.input[2]) {
      const b = floatsOf(inits.get(conv.input[2])!);
      const bq = Int32Array.from(b, (v, o) => Math.round(v / (xp.scale * ws[o]!)));
      added.push(tensor(`${base}__b_i32`, INT32, [M], bq));
      inputs.push(`${base}__b_i32`);
    }
    for (const n of conv.input.slice(1)) if (n) droppedInits.add(n);
    replace.set(conv, [
      {
        input: inputs,
        output: [yp.q],
        name: `${conv.name ?? base}_quant`,
        opType: 'QLinearConv',
        attribute: conv.attribute,
      },
    ]);
    if (relu) replace.set(relu, []);
  }

  // Boundaries: a QuantizeLinear for each quantised input not produced by a QLinearConv, a DequantizeLinear
  // for each QLinearConv output that something other than QLinearConvs (or the graph's outputs) reads.
  const convSet = new Set(convs);
  const qNodes = new Map<string, Node>(),
    dqNodes = new Map<string, Node>();
  for (const [name, p] of qParams) {
    const readers = (uses.get(name) ?? []).filter((n) => !convSet.has(n) && !replace.has(n));
    if (!producedByQConv.has(name)) {
      qNodes.set(name, {
        input: [name, p.s, p.z],
        output: [p.q],
        name: `${name}_QuantizeLinear`,
        opType: 'QuantizeLinear',
        attribute: [],
      });
    } else if (readers.length || graphOutputs.has(name)) {
      dqNodes.set(name, {
        input: [p.q, p.s, p.z],
        output: [name],
        name: `${name}_DequantizeLinear`,
        opType: 'DequantizeLinear',
        attribute: [],
      });
    }
  }

  // Rebuild the node list in order: a Q right after its float producer (or first, for graph inputs and
  // initializers), a DQ right after the QLinearConv that produces its input.
  const nodes: Node[] = [];
  const emitAfter = (outputs: string[]) => {
    for (const o of outputs) {
      const q = qNodes.get(o);
      if (q) {
        nodes.push(q);
        qNodes.delete(o);
      }
    }
  };
  emitAfter([...g.input.map((v) => v.name), ...g.initializer.map((t) => t.name)]);
  for (const n of g.node) {
    const r = replace.get(n);
    if (!r) {
      nodes.push(n);
      emitAfter(n.output);
      continue;
    }
    for (const x of r) {
      nodes.push(x);
      for (const [name, p] of qParams)
        if (p.q === x.output[0]) {
          const dq = dqNodes.get(name);
          if (dq) {
            nodes.push(dq);
            emitAfter([name]);
          }
        }
    }
  }
  if (qNodes.size) throw new Error(`no producer found for ${[...qNodes.keys()].join(', ')}`);

  // Float weights still read by some other node stay.
  const stillRead = new Set(nodes.flatMap((n) => n.input));
  g.initializer = [...g.initializer.filter((t) => !droppedInits.has(t.name) || stillRead.has(t.name)), ...added];
  g.node = nodes;
  g.input = g.input.filter((v) => !droppedInits.has(v.name) || stillRead.has(v.name));
  g.valueInfo = (g.valueInfo ?? []).filter((v) => !producedByQConv.has(v.name) || dqNodes.has(v.name));
  return encode(m);
}

/** Smallest normal float32: below it (in magnitude) a float is subnormal. */
const FLT_MIN = 1.1754943508222875e-38;

/**
 * The model with its subnormal float weights set to zero, and how many there were. Subnormal operands make
 * x86 and wasm floating-point arithmetic take a slow path (a microcode assist per operation), and a weight
 * below 1.2e-38 changes no sum of activations of ordinary size: measured on real faces, the outputs keep every
 * bit, except outputs that were subnormal themselves (fr_gender's SSR-Net offsets, 2e-40 -> 0); see
 * docs/extraction.md "int8".
 */
export function flushSubnormalWeights(bytes: Uint8Array): { model: Uint8Array; flushed: number } {
  const m = decode(bytes);
  let flushed = 0;
  m.graph.initializer = m.graph.initializer.map((t) => {
    if (t.dataType !== FLOAT) return t;
    const f = floatsOf(t);
    let n = 0;
    for (let i = 0; i < f.length; i++)
      if (f[i] !== 0 && Math.abs(f[i]!) < FLT_MIN) {
        f[i] = 0;
        n++;
      }
    if (!n) return t;
    flushed += n;
    return { ...t, floatData: undefined, rawData: new Uint8Array(f.buffer) };
  });
  return { model: flushed ? encode(m) : bytes, flushed };
}
