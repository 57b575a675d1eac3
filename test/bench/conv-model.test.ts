// The benchmark's hand-written ONNX model must be the convolution it claims to be, on both runtimes it times.
import * as ort from 'onnxruntime-web';
import { expect, it } from 'vitest';
import { conv1x1Model } from '../../bench/conv-model.js';
import { loadOrtNode } from '../../bench/ort-node.js';

it('conv1x1Model computes y = W x at every pixel in onnxruntime-web and onnxruntime-node', async () => {
  const inC = 3,
    outC = 2,
    size = 2;
  const w = Float32Array.from([1, 2, 3, -1, 0.5, 0]); // row o: weights of output channel o
  const x = Float32Array.from({ length: inC * size * size }, (_, i) => i + 1); // planes of 4 pixels
  const expected: number[] = [];
  for (let o = 0; o < outC; o++)
    for (let p = 0; p < size * size; p++) {
      let s = 0;
      for (let c = 0; c < inC; c++) s += w[o * inC + c]! * x[c * size * size + p]!;
      expected.push(s);
    }
  const model = conv1x1Model(inC, outC, size, w);
  ort.env.wasm.numThreads = 1;
  const web = await ort.InferenceSession.create(model, { executionProviders: ['wasm'] });
  const ortNode = loadOrtNode(); // tools/bench, installed on first use
  const native = await ortNode.InferenceSession.create(model);
  for (const session of [web, native] as const) {
    const Tensor = session === web ? ort.Tensor : ortNode.Tensor;
    const out = await (session as ort.InferenceSession).run({
      x: new Tensor('float32', x, [1, inC, size, size]) as ort.Tensor,
    });
    expect(out.y!.dims).toEqual([1, outC, size, size]);
    expect(Array.from(out.y!.data as Float32Array)).toEqual(expected);
  }
  await web.release();
  await native.release();
});
