// A one-node ONNX model (a 1x1 convolution, which is a matrix product) written byte by byte, so the face
// benchmark can time the operation that dominates the face models on both runtimes with nothing else around
// it. Only the protobuf fields ONNX needs here are written (onnx.proto: ModelProto, GraphProto, NodeProto,
// AttributeProto, TensorProto, ValueInfoProto, TypeProto).

import { concatBytes as concat } from '../src/biometrics/bytes.js';

function varint(v: number): number[] {
  const out: number[] = [];
  while (v >= 128) {
    out.push((v % 128) | 128);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

/** A varint field (wire type 0). */
const num = (field: number, v: number) => [...varint(field * 8), ...varint(v)];
/** A length-delimited field (wire type 2): a string, bytes or an embedded message. */
const bytes = (field: number, body: Uint8Array | string) => {
  const b = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  return concat([varint(field * 8 + 2), varint(b.length), b]);
};
const message = (field: number, ...parts: (Uint8Array | number[])[]) => bytes(field, concat(parts));

const FLOAT = 1;
const INTS = 7;

/** ValueInfoProto of a float tensor of fixed shape. */
function tensorInfo(field: number, name: string, shape: readonly number[]) {
  const dims = shape.map((d) => message(1, num(1, d))); // TensorShapeProto.dim { dim_value }
  return message(field, bytes(1, name), message(2, message(1, num(1, FLOAT), message(2, ...dims))));
}

/**
 * ONNX bytes of `y = Conv(x, w)` with a 1x1 kernel, no bias: x [1, inC, size, size], w [outC, inC, 1, 1]
 * (the given weights, or a deterministic pattern), y [1, outC, size, size]. Opset 13.
 */
export function conv1x1Model(inC: number, outC: number, size: number, weights?: Float32Array): Uint8Array {
  const w =
    weights ??
    Float32Array.from({ length: outC * inC }, (_, i) => (((i * 2654435761) >>> 22) / 1024 - 0.5) / Math.sqrt(inC));
  const raw = new Uint8Array(w.buffer, w.byteOffset, w.byteLength);
  const node = message(
    1,
    bytes(1, 'x'),
    bytes(1, 'w'),
    bytes(2, 'y'),
    bytes(4, 'Conv'),
    message(5, bytes(1, 'kernel_shape'), num(20, INTS), num(8, 1), num(8, 1)),
  );
  const initializer = message(
    5,
    num(1, outC),
    num(1, inC),
    num(1, 1),
    num(1, 1),
    num(2, FLOAT),
    bytes(8, 'w'),
    bytes(9, raw),
  );
  const graph = message(
    7,
    node,
    bytes(2, 'conv1x1'),
    initializer,
    tensorInfo(11, 'x', [1, inC, size, size]),
    tensorInfo(12, 'y', [1, outC, size, size]),
  );
  return concat([num(1, 8), graph, message(8, bytes(1, ''), num(2, 13))]);
}
