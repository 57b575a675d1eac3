/**
 * Writes the GE2E speaker encoder (Resemblyzer's VoiceEncoder: a 3-layer LSTM of 256 units over 40 mel bands,
 * a 256x256 linear layer, ReLU, L2 normalisation) as ONNX, from weights in PyTorch's layout.
 *
 * The graph is the one the service ships (wasm/models/voice-manifest.json: input `mels` [batch, frames, 40],
 * outputs `embedding` and `emb_raw` [batch, 256]; opset 17): Transpose to time-major, three ONNX LSTMs
 * chained through Squeeze, Gemm, Relu, LpNormalization. Weights are stored as float16 with a Cast to float,
 * as in the shipped file (the model version is "fp16w": its templates were made with float16 weights, so a
 * model rebuilt from the float32 checkpoint rounds them the same way, to nearest even), and each layer's two
 * PyTorch biases are added (in float32) into ONNX's input bias with a zero recurrence bias, as the shipped
 * file has them. ONNX orders an LSTM's gates i, o, f, c; PyTorch orders them i, f, g(=c), o.
 * Only the protobuf fields used are written (onnx.proto: ModelProto, GraphProto, NodeProto, AttributeProto,
 * TensorProto, ValueInfoProto, TypeProto, OperatorSetIdProto, StringStringEntryProto).
 */
import { concatBytes as concat } from '../../src/biometrics/bytes.js';

export const MEL_BANDS = 40;
export const HIDDEN = 256;
export const LAYERS = 3;
export const EMBEDDING = 256;

/** One LSTM layer in PyTorch's layout: weight_ih [4H, in], weight_hh [4H, H], bias_ih and bias_hh [4H]. */
export interface LstmLayer {
  weightIh: Float32Array;
  weightHh: Float32Array;
  biasIh: Float32Array;
  biasHh: Float32Array;
}

/** The encoder's weights as Resemblyzer's state_dict holds them (lstm.*_l0..2, linear.weight, linear.bias). */
export interface Ge2eWeights {
  layers: LstmLayer[];
  linearWeight: Float32Array;
  linearBias: Float32Array;
}

/** PyTorch gate block (i, f, g, o) for each ONNX gate block (i, o, f, c). */
const PYTORCH_BLOCK_OF_ONNX = [0, 3, 1, 2];

/** Rows of a [4H, cols] PyTorch gate matrix reordered into ONNX's gate order. */
export function toOnnxGateOrder(m: Float32Array, cols: number): Float32Array {
  const block = HIDDEN * cols;
  const out = new Float32Array(m.length);
  PYTORCH_BLOCK_OF_ONNX.forEach((from, to) => out.set(m.subarray(from * block, (from + 1) * block), to * block));
  return out;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float32 -> IEEE half bits, rounding to nearest even (overflow to infinity, underflow through subnormals). */
export function floatToHalf(v: number): number {
  f32[0] = v;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 112; // rebias 127 -> 15
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1),
      half = 1 << (shift - 1);
    if (rem > half || (rem === half && h & 1)) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && h & 1)) h++; // a carry into the exponent is still right
  return sign | h;
}

function halfBytes(values: Float32Array): Uint8Array {
  const out = new Uint8Array(values.length * 2);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < values.length; i++) dv.setUint16(i * 2, floatToHalf(values[i]!), true);
  return out;
}

function varint(v: number): number[] {
  const out: number[] = [];
  while (v >= 128) {
    out.push((v % 128) | 128);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}
const num = (field: number, v: number) => Uint8Array.from([...varint(field * 8), ...varint(v)]);
const bytes = (field: number, body: Uint8Array | string) => {
  const b = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  return concat([Uint8Array.from(varint(field * 8 + 2)), Uint8Array.from(varint(b.length)), b]);
};
const message = (field: number, ...parts: Uint8Array[]) => bytes(field, concat(parts));

const FLOAT = 1,
  INT64 = 7,
  FLOAT16 = 10;
const ATTR_INT = 2,
  ATTR_INTS = 7;

const node = (op: string, name: string, inputs: string[], outputs: string[], ...attrs: Uint8Array[]) =>
  message(
    1,
    ...inputs.map((i) => bytes(1, i)),
    ...outputs.map((o) => bytes(2, o)),
    bytes(3, name),
    bytes(4, op),
    ...attrs,
  );
const intAttr = (name: string, v: number) => message(5, bytes(1, name), num(3, v), num(20, ATTR_INT));
const intsAttr = (name: string, vs: number[]) =>
  message(5, bytes(1, name), ...vs.map((v) => num(8, v)), num(20, ATTR_INTS));
const tensor = (name: string, dims: number[], type: number, raw: Uint8Array) =>
  message(5, ...dims.map((d) => num(1, d)), num(2, type), bytes(8, name), bytes(9, raw));
const dim = (d: number | string) => message(1, typeof d === 'number' ? num(1, d) : bytes(2, d));
const valueInfo = (field: number, name: string, dims: (number | string)[]) =>
  message(field, bytes(1, name), message(2, message(1, num(1, FLOAT), message(2, ...dims.map(dim)))));
const meta = (key: string, value: string) => message(14, bytes(1, key), bytes(2, value));

function check(what: string, a: Float32Array, n: number): void {
  if (a.length !== n) throw new Error(`${what} has ${a.length} values, expected ${n}`);
}

/**
 * ONNX model bytes of the encoder. They depend on the weights alone (no name, date or checkpoint hash in the
 * metadata), so that one set of weights always makes one file, whose SHA-256 the manifest pins.
 */
export function ge2eOnnx(w: Ge2eWeights): Uint8Array {
  if (w.layers.length !== LAYERS) throw new Error(`${w.layers.length} LSTM layers, expected ${LAYERS}`);
  const nodes: Uint8Array[] = [node('Transpose', 'to_time_major', ['mels'], ['x0'], intsAttr('perm', [1, 0, 2]))];
  const inits: Uint8Array[] = [
    tensor('ax0', [1], INT64, new Uint8Array(8)),
    tensor('ax1', [1], INT64, Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 0)),
  ];
  const cast = (name: string) => node('Cast', `cast_${name}`, [`${name}_f16`], [name], intAttr('to', FLOAT));
  w.layers.forEach((l, k) => {
    const inputs = k === 0 ? MEL_BANDS : HIDDEN;
    check(`lstm.weight_ih_l${k}`, l.weightIh, 4 * HIDDEN * inputs);
    check(`lstm.weight_hh_l${k}`, l.weightHh, 4 * HIDDEN * HIDDEN);
    check(`lstm.bias_ih_l${k}`, l.biasIh, 4 * HIDDEN);
    check(`lstm.bias_hh_l${k}`, l.biasHh, 4 * HIDDEN);
    const bias = new Float32Array(8 * HIDDEN); // [Wb (the sum of both biases), Rb (zero)]
    bias.set(
      toOnnxGateOrder(
        l.biasIh.map((b, i) => b + l.biasHh[i]!),
        1,
      ),
    );
    inits.push(
      tensor(`W${k}_f16`, [1, 4 * HIDDEN, inputs], FLOAT16, halfBytes(toOnnxGateOrder(l.weightIh, inputs))),
      tensor(`R${k}_f16`, [1, 4 * HIDDEN, HIDDEN], FLOAT16, halfBytes(toOnnxGateOrder(l.weightHh, HIDDEN))),
      tensor(`B${k}_f16`, [1, 8 * HIDDEN], FLOAT16, halfBytes(bias)),
    );
    nodes.push(
      cast(`W${k}`),
      cast(`R${k}`),
      cast(`B${k}`),
      node(
        'LSTM',
        `lstm${k}`,
        [`x${k}`, `W${k}`, `R${k}`, `B${k}`],
        [`Y${k}`, `Yh${k}`],
        intAttr('hidden_size', HIDDEN),
      ),
    );
    if (k < LAYERS - 1) nodes.push(node('Squeeze', `sq${k}`, [`Y${k}`, 'ax1'], [`x${k + 1}`]));
  });
  check('linear.weight', w.linearWeight, EMBEDDING * HIDDEN);
  check('linear.bias', w.linearBias, EMBEDDING);
  inits.push(
    tensor('linW_f16', [EMBEDDING, HIDDEN], FLOAT16, halfBytes(w.linearWeight)),
    tensor('linB_f16', [EMBEDDING], FLOAT16, halfBytes(w.linearBias)),
  );
  nodes.push(
    node('Squeeze', 'last_state', [`Yh${LAYERS - 1}`, 'ax0'], ['hlast']),
    cast('linW'),
    cast('linB'),
    node('Gemm', 'linear', ['hlast', 'linW', 'linB'], ['lin'], intAttr('transB', 1)),
    node('Relu', 'relu', ['lin'], ['emb_raw']),
    node('LpNormalization', 'l2norm', ['emb_raw'], ['embedding'], intAttr('axis', 1), intAttr('p', 2)),
  );
  const graph = message(
    7,
    ...nodes,
    bytes(2, 'resemblyzer_ge2e_voice_encoder'),
    ...inits,
    valueInfo(11, 'mels', ['batch', 'frames', MEL_BANDS]),
    valueInfo(12, 'embedding', ['batch', EMBEDDING]),
    valueInfo(12, 'emb_raw', ['batch', EMBEDDING]),
  );
  return concat([
    num(1, 8),
    bytes(2, 'bims-voice-model'),
    graph,
    message(8, bytes(1, ''), num(2, 17)),
    meta('source', 'resemble-ai/Resemblyzer pretrained.pt, converted by BIMS scripts/voice-model.ts'),
    meta('weights_license', 'Apache-2.0, Copyright 2019 Resemble.AI (resemble-ai/Resemblyzer pretrained.pt)'),
    meta(
      'input',
      'mels [batch, frames(=160 per partial), 40]: librosa power mel (NOT log), sr 16k, n_fft 400, hop 160, hann, slaney mel+norm, center=True',
    ),
    meta('output', 'embedding [batch,256] = L2norm(relu(linear(h_T of LSTM layer 3))); emb_raw before normalisation'),
  ]);
}
