/**
 * The shipped speaker encoder's weights (../shared/models/voice/) as Resemblyzer's checkpoint holds them:
 * {"step", "model_state": OrderedDict of lstm.* and linear.* in PyTorch's layout, "optimizer_state"}, for
 * writing test checkpoints. Reads the ONNX initializers by name and undoes ONNX's LSTM layout (gates i, o, f, c
 * -> PyTorch's i, f, g, o; the input and recurrence biases are the two halves of B).
 */
import { readFileSync } from 'node:fs';
import { halfToFloatBits } from '../../src/extraction/onnx-fold-casts.js';
import { OrderedDict, Tensor, type PickleValue } from './torch-checkpoint-writer.js';

export const SHARED_VOICE_DIR = new URL('../../../shared/models/voice/', import.meta.url);

function varint(b: Uint8Array, p: number): [number, number] {
  let v = 0,
    scale = 1;
  for (;;) {
    const c = b[p++]!;
    v += (c & 0x7f) * scale;
    if (!(c & 0x80)) return [v, p];
    scale *= 128;
  }
}

/** Length-delimited fields [number, body] of a protobuf message (other wire types skipped). */
function messages(b: Uint8Array, from: number, to: number): [number, Uint8Array][] {
  const out: [number, Uint8Array][] = [];
  let p = from;
  while (p < to) {
    let tag: number, len: number;
    [tag, p] = varint(b, p);
    const wire = tag & 7;
    if (wire === 0) [, p] = varint(b, p);
    else if (wire === 1) p += 8;
    else if (wire === 5) p += 4;
    else {
      [len, p] = varint(b, p);
      out.push([tag >> 3, b.subarray(p, p + len)]);
      p += len;
    }
  }
  return out;
}

/** Float16 initializers of an ONNX model, widened, by name. */
function initializers(model: Uint8Array): Map<string, Float32Array> {
  const graph = messages(model, 0, model.length).find(([n]) => n === 7)![1];
  const out = new Map<string, Float32Array>();
  const bits = new DataView(new ArrayBuffer(4));
  for (const [n, t] of messages(graph, 0, graph.length)) {
    if (n !== 5) continue;
    const fields = messages(t, 0, t.length);
    const name = new TextDecoder().decode(fields.find(([f]) => f === 8)![1]);
    const raw = fields.find(([f]) => f === 9)?.[1];
    if (!raw || !name.endsWith('_f16')) continue;
    const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    out.set(
      name.slice(0, -4),
      Float32Array.from({ length: raw.length / 2 }, (_, i) => {
        bits.setUint32(0, halfToFloatBits(dv.getUint16(i * 2, true)));
        return bits.getFloat32(0);
      }),
    );
  }
  return out;
}

/** ONNX gate blocks (i, o, f, c) back into PyTorch's (i, f, g, o). */
function pytorchGates(m: Float32Array): Float32Array {
  const block = m.length / 4;
  const onnxBlockOf = [0, 2, 3, 1]; // PyTorch i <- ONNX i, f <- f (2), g <- c (3), o <- o (1)
  const out = new Float32Array(m.length);
  onnxBlockOf.forEach((from, to) => out.set(m.subarray(from * block, (from + 1) * block), to * block));
  return out;
}

/** The model_state entries (name, shape, values) of the shipped model. */
export function sharedStateDict(): [string, Tensor][] {
  const w = initializers(new Uint8Array(readFileSync(new URL('resemblyzer_ge2e_fp16w.onnx', SHARED_VOICE_DIR))));
  const entries: [string, Tensor][] = [];
  for (let k = 0; k < 3; k++) {
    const inputs = k === 0 ? 40 : 256;
    const b = w.get(`B${k}`)!;
    entries.push(
      [`lstm.weight_ih_l${k}`, new Tensor([1024, inputs], pytorchGates(w.get(`W${k}`)!))],
      [`lstm.weight_hh_l${k}`, new Tensor([1024, 256], pytorchGates(w.get(`R${k}`)!))],
      [`lstm.bias_ih_l${k}`, new Tensor([1024], pytorchGates(b.slice(0, 1024)))],
      [`lstm.bias_hh_l${k}`, new Tensor([1024], pytorchGates(b.slice(1024)))],
    );
  }
  entries.push(
    ['linear.weight', new Tensor([256, 256], w.get('linW')!)],
    ['linear.bias', new Tensor([256], w.get('linB')!)],
  );
  return entries;
}

/**
 * A checkpoint object shaped like Resemblyzer's pretrained.pt: the step, the model state (with GE2E's
 * similarity parameters, which the encoder does not use) and an Adam optimizer state.
 */
export function resemblyzerCheckpointObject(stateDict: [string, Tensor][] = sharedStateDict()): PickleValue {
  const model = new OrderedDict([
    ['similarity_weight', new Tensor([1], Float32Array.of(10))],
    ['similarity_bias', new Tensor([1], Float32Array.of(-5))],
    ...stateDict,
  ]);
  const optimizer = new Map<string, PickleValue>([
    [
      'state',
      new Map<number, PickleValue>([
        [
          0,
          new Map<string, PickleValue>([
            ['step', 1_560_000],
            ['exp_avg', new Tensor([1], Float32Array.of(0.001))],
          ]),
        ],
      ]),
    ],
    [
      'param_groups',
      [
        new Map<string, PickleValue>([
          ['lr', 0.0001],
          ['betas', [0.9, 0.999]],
          ['eps', 1e-8],
          ['weight_decay', 0],
          ['amsgrad', false],
          ['params', [0, 1, 2]],
        ]),
      ],
    ],
  ]);
  return new Map<string, PickleValue>([
    ['step', 1_560_001],
    ['model_state', model],
    ['optimizer_state', optimizer],
  ]);
}
