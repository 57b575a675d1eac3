// Experiment (issue 19): PRelu(x, slope) as Relu(x) + Relu(-x) * (-slope), the same value bit for bit (one of
// the two terms is an exact zero; (-x) * (-slope) is x * slope exactly). onnxruntime-node runs PRelu outside its
// NCHWc layout (reorders around each one); this asks whether the split form stays inside it.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const root = protobuf.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'onnx.proto'), 'utf8'), {
  keepCase: false,
}).root;
const ModelProto = root.lookupType('onnx.ModelProto');

interface Tensor {
  name: string;
  dims: number[];
  dataType: number;
  rawData?: Uint8Array;
  floatData?: number[];
}
interface Node {
  input: string[];
  output: string[];
  name?: string;
  opType: string;
  attribute?: unknown[];
}

/** The model with every PRelu whose slope is a float initializer split as above (a copy). */
export function splitPRelu(bytes: Uint8Array): Uint8Array {
  const m = ModelProto.toObject(ModelProto.decode(bytes), { longs: Number, arrays: true, defaults: false }) as {
    graph: { node: Node[]; initializer: Tensor[] };
  };
  const g = m.graph;
  const inits = new Map(g.initializer.map((t) => [t.name, t]));
  const nodes: Node[] = [];
  for (const n of g.node) {
    const s = n.opType === 'PRelu' ? inits.get(n.input[1]!) : undefined;
    if (!s || s.dataType !== 1) {
      nodes.push(n);
      continue;
    }
    const v = s.rawData?.length
      ? new Float32Array(Uint8Array.from(s.rawData).buffer)
      : Float32Array.from(s.floatData ?? []);
    const neg = Float32Array.from(v, (x) => -x);
    const p = `${n.output[0]}__split`;
    g.initializer.push({ name: `${p}_negslope`, dims: s.dims, dataType: 1, rawData: new Uint8Array(neg.buffer) });
    nodes.push(
      { opType: 'Relu', input: [n.input[0]!], output: [`${p}_pos`], name: `${p}_relu` },
      { opType: 'Neg', input: [n.input[0]!], output: [`${p}_negx`], name: `${p}_neg` },
      { opType: 'Relu', input: [`${p}_negx`], output: [`${p}_negpart`], name: `${p}_relu2` },
      { opType: 'Mul', input: [`${p}_negpart`, `${p}_negslope`], output: [`${p}_scaled`], name: `${p}_mul` },
      { opType: 'Add', input: [`${p}_pos`, `${p}_scaled`], output: [n.output[0]!], name: `${p}_add` },
    );
  }
  g.node = nodes;
  return ModelProto.encode(ModelProto.fromObject(m)).finish();
}
