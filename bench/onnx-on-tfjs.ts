/**
 * An ONNX face model run as tfjs ops, so that it can be timed on tfjs-backend-wasm: XNNPACK compiled to
 * WebAssembly SIMD, a second kernel library beside onnxruntime-web's MLAS (bench/xnnpack.ts, issue 19).
 *
 * Activations are NHWC, tfjs's (and XNNPACK's) layout: the input is transposed from NCHW once, 4-D outputs back
 * at the end, and the layout-dependent operators (Shape, Reshape, Flatten) answer in NCHW terms. A Conv takes
 * a Relu or PRelu that follows it as its fused activation, as onnxruntime fuses its Conv + activation. The ops
 * are those of fr_feature, fr_landmark and fr_liveness; any other is refused when the model is read, by name.
 */
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';

/** An opaque tfjs tensor. */
export interface TfTensor {
  readonly shape: number[];
  dataSync(): ArrayLike<number>;
  dispose(): void;
}

/** What the fused convolutions take (tfjs-core's `fused.conv2d` / `fused.depthwiseConv2d` arguments). */
interface FusedConvArgs {
  x: TfTensor;
  filter: TfTensor;
  strides: [number, number];
  pad: number[][];
  dilations: [number, number];
  dataFormat: 'NHWC';
  bias?: TfTensor;
  activation: 'linear' | 'relu' | 'prelu';
  preluActivationWeights?: TfTensor;
}

/**
 * The part of @tensorflow/tfjs-core used here. The package lives in tools/xnnpack, outside the root install
 * (scripts/tool.mjs), so tsc does not see its own types.
 */
export interface Tf {
  tensor(values: Float32Array, shape: number[]): TfTensor;
  transpose(x: TfTensor, perm: number[]): TfTensor;
  reshape(x: TfTensor, shape: number[]): TfTensor;
  add(a: TfTensor, b: TfTensor): TfTensor;
  mul(a: TfTensor, b: TfTensor): TfTensor;
  prelu(x: TfTensor, alpha: TfTensor): TfTensor;
  relu(x: TfTensor): TfTensor;
  sigmoid(x: TfTensor): TfTensor;
  mean(x: TfTensor, axis: number[], keepDims: boolean): TfTensor;
  matMul(a: TfTensor, b: TfTensor, transposeA: boolean, transposeB: boolean): TfTensor;
  fused: { conv2d(args: FusedConvArgs): TfTensor; depthwiseConv2d(args: FusedConvArgs): TfTensor };
  tidy<T>(fn: () => T): T;
}

/** A model ready to run: NCHW input in, each graph output (NCHW when 4-D) out, by name. */
export interface TfjsModel {
  readonly inputName: string;
  readonly outputNames: readonly string[];
  run(input: Float32Array, dims: readonly number[]): Record<string, Float32Array>;
  /** Frees the weight tensors. */
  dispose(): void;
}

// ONNX's protobuf schema, decoded with protobufjs as scripts/quantise/onnx-int8.ts does.
const ModelProto = protobuf
  .parse(readFileSync(new URL('../scripts/quantise/onnx.proto', import.meta.url), 'utf8'), { keepCase: false })
  .root.lookupType('onnx.ModelProto');

interface OnnxTensor {
  name: string;
  dims: number[];
  dataType: number;
  rawData?: Uint8Array;
  floatData?: number[];
  int64Data?: number[];
}
interface OnnxNode {
  input: string[];
  output: string[];
  opType: string;
  attribute: { name: string; i?: number; ints?: number[]; f?: number; s?: Uint8Array; t?: OnnxTensor }[];
}
interface OnnxGraph {
  node: OnnxNode[];
  initializer: OnnxTensor[];
  input: { name: string }[];
  output: { name: string }[];
}

const FLOAT = 1,
  INT64 = 7;

function floatsOf(t: OnnxTensor): Float32Array {
  if (t.dataType !== FLOAT) throw new Error(`initializer ${t.name} is not float32`);
  // A copy with its own buffer (the decoded bytes are a view on the whole model).
  if (t.rawData?.length) return new Float32Array(Uint8Array.from(t.rawData).buffer);
  return Float32Array.from(t.floatData ?? []);
}

function intsOf(t: OnnxTensor): number[] {
  if (t.dataType !== INT64) throw new Error(`tensor ${t.name} is not int64`);
  if (t.rawData?.length) return Array.from(new BigInt64Array(Uint8Array.from(t.rawData).buffer), Number);
  return [...(t.int64Data ?? [])];
}

/** A value computed from shapes rather than from the input's data (Shape, Gather, Unsqueeze, Concat). */
class Ints {
  constructor(readonly values: number[]) {}
}
type Value = TfTensor | Ints;

// The operators of fr_feature, fr_landmark and fr_liveness (the last's Shape ... Reshape is a flatten).
const SUPPORTED = new Set([
  'Conv',
  'Relu',
  'PRelu',
  'Sigmoid',
  'Add',
  'Mul',
  'GlobalAveragePool',
  'BatchNormalization',
  'Gemm',
  'MatMul',
  'Flatten',
  'Reshape',
  'Shape',
  'Gather',
  'Unsqueeze',
  'Concat',
  'Constant',
]);

/** Reads an ONNX model (opset 9, float32) into tfjs ops on `tf`'s current backend. @throws on other operators. */
export function onnxOnTfjs(tf: Tf, model: Uint8Array): TfjsModel {
  const graph = (
    ModelProto.toObject(ModelProto.decode(model), { longs: Number, arrays: true, defaults: false }) as {
      graph: OnnxGraph;
    }
  ).graph;
  const unsupported = [...new Set(graph.node.map((n) => n.opType).filter((op) => !SUPPORTED.has(op)))];
  if (unsupported.length) throw new Error(`operators the tfjs interpreter does not know: ${unsupported.join(', ')}`);

  const init = new Map(graph.initializer.map((t) => [t.name, t]));
  const weight = (name: string) => {
    const t = init.get(name);
    if (!t) throw new Error(`${name} is expected to be an initializer`);
    return t;
  };
  const consumers = new Map<string, number>();
  for (const n of graph.node) for (const i of n.input) consumers.set(i, (consumers.get(i) ?? 0) + 1);
  const weights: TfTensor[] = [];
  const keep = (values: Float32Array, shape: number[]) => {
    const t = tf.tensor(values, shape);
    weights.push(t);
    return t;
  };
  /** A per-channel parameter (ONNX [C] or [C,1,1]) as [C], which broadcasts along NHWC's last axis. */
  const perChannel = (name: string) => {
    const t = weight(name);
    if (t.dims.slice(1).some((d) => d !== 1)) throw new Error(`${name}: not a per-channel parameter`);
    return keep(floatsOf(t), [t.dims[0] ?? 1]);
  };

  const steps: ((env: Map<string, Value>) => void)[] = [];
  const tensorIn = (env: Map<string, Value>, name: string) => {
    const v = env.get(name);
    if (!v || v instanceof Ints) throw new Error(`${name}: expected an activation`);
    return v;
  };
  const intsIn = (env: Map<string, Value>, name: string) => {
    const v = env.get(name) ?? (init.has(name) ? new Ints(intsOf(init.get(name)!)) : undefined);
    if (!(v instanceof Ints)) throw new Error(`${name}: expected a shape value`);
    return v.values;
  };
  /** A tensor in NCHW order (4-D activations are NHWC here), as ONNX's layout-dependent ops see it. */
  const nchw = (x: TfTensor) => (x.shape.length === 4 ? tf.transpose(x, [0, 3, 1, 2]) : x);

  const nodes = graph.node;
  for (let k = 0; k < nodes.length; k++) {
    const n = nodes[k]!;
    const [a = '', b = ''] = n.input;
    const out = n.output[0]!;
    const attr = (name: string) => n.attribute.find((x) => x.name === name);
    const unary = (f: (x: TfTensor) => TfTensor) => steps.push((env) => env.set(out, f(tensorIn(env, a))));
    switch (n.opType) {
      case 'Conv': {
        const w = weight(b);
        const [co, ciPerGroup, kh, kw] = w.dims as [number, number, number, number];
        const group = attr('group')?.i ?? 1;
        const [sh, sw] = (attr('strides')?.ints ?? [1, 1]) as [number, number];
        const [dh, dw] = (attr('dilations')?.ints ?? [1, 1]) as [number, number];
        const [pt, pl, pb, pr] = attr('pads')?.ints ?? [0, 0, 0, 0];
        const autoPad = Buffer.from(attr('auto_pad')?.s ?? []).toString();
        if (autoPad && autoPad !== 'NOTSET') throw new Error(`Conv auto_pad ${autoPad} is not supported`);
        const depthwise = group > 1;
        if (depthwise && ciPerGroup !== 1) throw new Error(`Conv: grouped (not depthwise) convolution, group ${group}`);
        // ONNX [O, I, kh, kw] -> tfjs [kh, kw, I, O]; depthwise: O = C * multiplier -> [kh, kw, C, multiplier].
        const filter = tf.tidy(() =>
          depthwise
            ? tf.transpose(tf.tensor(floatsOf(w), [group, co / group, kh, kw]), [2, 3, 0, 1])
            : tf.transpose(tf.tensor(floatsOf(w), [co, ciPerGroup, kh, kw]), [2, 3, 1, 0]),
        );
        weights.push(filter);
        const bias = n.input[2] ? perChannel(n.input[2]) : undefined;
        // The activation that follows, fused when the convolution's output goes nowhere else.
        let result = out;
        let activation: FusedConvArgs['activation'] = 'linear';
        let preluActivationWeights: TfTensor | undefined;
        const next = nodes[k + 1];
        if (next?.input[0] === out && consumers.get(out) === 1 && (next.opType === 'Relu' || next.opType === 'PRelu')) {
          activation = next.opType === 'Relu' ? 'relu' : 'prelu';
          if (next.opType === 'PRelu') preluActivationWeights = perChannel(next.input[1]!);
          result = next.output[0]!;
          k++;
        }
        const conv = depthwise ? tf.fused.depthwiseConv2d : tf.fused.conv2d;
        const pad = [
          [0, 0],
          [pt!, pb!],
          [pl!, pr!],
          [0, 0],
        ];
        steps.push((env) =>
          env.set(
            result,
            conv({
              x: tensorIn(env, a),
              filter,
              strides: [sh, sw],
              pad,
              dilations: [dh, dw],
              dataFormat: 'NHWC',
              bias,
              activation,
              preluActivationWeights,
            }),
          ),
        );
        break;
      }
      case 'Relu':
        unary((x) => tf.relu(x));
        break;
      case 'Sigmoid':
        unary((x) => tf.sigmoid(x));
        break;
      case 'PRelu': {
        const slope = perChannel(b);
        unary((x) => tf.prelu(x, slope));
        break;
      }
      case 'Add':
      case 'Mul': {
        if (init.has(a) || init.has(b)) throw new Error(`${n.opType} with a constant operand is not supported`);
        const f = n.opType === 'Add' ? tf.add : tf.mul;
        steps.push((env) => env.set(out, f(tensorIn(env, a), tensorIn(env, b))));
        break;
      }
      case 'GlobalAveragePool':
        unary((x) => tf.mean(x, [1, 2], true));
        break;
      case 'BatchNormalization': {
        // Inference form, folded to one multiply-add per channel (the channel axis is the last in NHWC and 2-D).
        const [scale, shift, mean, variance] = n.input.slice(1).map((name) => floatsOf(weight(name)));
        const eps = attr('epsilon')?.f ?? 1e-5;
        const mul = scale!.map((s, c) => s / Math.sqrt(variance![c]! + eps));
        const add = shift!.map((s, c) => s - mean![c]! * mul[c]!);
        const m = keep(mul, [mul.length]),
          d = keep(add, [add.length]);
        unary((x) => tf.add(tf.mul(x, m), d));
        break;
      }
      case 'Gemm':
      case 'MatMul': {
        // Y = alpha * A B' + beta * C, with B (and C) initializers: alpha and beta folded into them.
        if ((attr('transA')?.i ?? 0) !== 0) throw new Error('Gemm transA is not supported');
        const transB = (attr('transB')?.i ?? 0) === 1;
        const alpha = attr('alpha')?.f ?? 1,
          beta = attr('beta')?.f ?? 1;
        const w = weight(b);
        const bw = keep(
          floatsOf(w).map((v) => v * alpha),
          w.dims,
        );
        const c = n.input[2] ? weight(n.input[2]) : undefined;
        const bc = c
          ? keep(
              floatsOf(c).map((v) => v * beta),
              c.dims,
            )
          : undefined;
        steps.push((env) => {
          const x = tensorIn(env, a);
          if (x.shape.length !== 2) throw new Error(`${n.opType} on a ${x.shape.length}-D input is not supported`);
          const y = tf.matMul(x, bw, false, transB);
          env.set(out, bc ? tf.add(y, bc) : y);
        });
        break;
      }
      case 'Flatten': {
        if ((attr('axis')?.i ?? 1) !== 1) throw new Error('Flatten other than axis 1 is not supported');
        unary((x) => tf.reshape(nchw(x), [x.shape[0]!, -1]));
        break;
      }
      case 'Reshape':
        steps.push((env) => {
          const x = tensorIn(env, a);
          const from = nchw(x);
          const shape = intsIn(env, b).map((d, i) => (d === 0 ? from.shape[i]! : d));
          if (shape.length === 4) throw new Error('Reshape to 4-D is not supported (its layout would be NCHW)');
          env.set(out, tf.reshape(from, shape));
        });
        break;
      case 'Shape':
        steps.push((env) => {
          const s = tensorIn(env, a).shape;
          env.set(out, new Ints(s.length === 4 ? [s[0]!, s[3]!, s[1]!, s[2]!] : [...s]));
        });
        break;
      case 'Gather': {
        if ((attr('axis')?.i ?? 0) !== 0) throw new Error('Gather other than axis 0 is not supported');
        steps.push((env) => {
          const from = intsIn(env, a);
          env.set(out, new Ints(intsIn(env, b).map((i) => from[i < 0 ? i + from.length : i]!)));
        });
        break;
      }
      // A shape value's rank is not tracked: a gathered scalar is kept as [v], which is what Unsqueeze makes.
      case 'Unsqueeze':
        steps.push((env) => env.set(out, new Ints(intsIn(env, a))));
        break;
      case 'Concat':
        steps.push((env) => env.set(out, new Ints(n.input.flatMap((name) => intsIn(env, name)))));
        break;
      case 'Constant': {
        const value = attr('value')?.t;
        if (value?.dataType !== INT64) throw new Error('Constant other than int64 is not supported');
        const ints = new Ints(intsOf(value));
        steps.push((env) => env.set(out, ints));
        break;
      }
    }
  }

  const inputName = graph.input.find((i) => !init.has(i.name))!.name;
  const outputNames = graph.output.map((o) => o.name);
  return {
    inputName,
    outputNames,
    run: (input, dims) => {
      const outputs: Record<string, Float32Array> = {};
      // The intermediate tensors are freed when tidy returns; the outputs leave as copies of their data.
      tf.tidy(() => {
        const env = new Map<string, Value>();
        env.set(inputName, tf.transpose(tf.tensor(input, [...dims]), [0, 2, 3, 1]));
        for (const step of steps) step(env);
        for (const name of outputNames) outputs[name] = Float32Array.from(nchw(tensorIn(env, name)).dataSync());
      });
      return outputs;
    },
    dispose: () => {
      for (const t of weights) t.dispose();
    },
  };
}
