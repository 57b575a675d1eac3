// The per-operator profiler of issue 19 (scripts/quantise/profile-ops.ts): how it names kinds of nodes so that
// onnxruntime-web's and onnxruntime-node's nodes line up, how it reads a profile (fastest run per node, layout
// conversions apart), and that it reads the trace the installed onnxruntime-web really prints.
import { describe, expect, it } from 'vitest';
import { kernelTimes, kindOf, profileWasm } from '../../scripts/quantise/profile-ops.js';

const kernel = (name: string, op: string, ins: number[][], out: number[], dur: number) => ({
  cat: 'Node',
  name: `${name}_kernel_time`,
  dur,
  args: { op_name: op, input_type_shape: ins.map((d) => ({ float: d })), output_type_shape: [{ float: out }] },
});
const run = (dur: number) => ({ cat: 'Session', name: 'model_run', dur });

describe('kindOf', () => {
  it('tells pointwise, depthwise, dense and strided convolutions apart, whatever the fused name', () => {
    expect(
      kindOf(
        'Conv',
        [
          [1, 64, 30, 40],
          [64, 64, 1, 1],
        ],
        [1, 64, 30, 40],
      ),
    ).toBe('Conv 1x1');
    expect(kindOf('FusedConv', [[1, 64, 30, 40], [64, 1, 3, 3], [64]], [1, 64, 30, 40])).toBe('Conv dw3x3');
    expect(
      kindOf(
        'Conv',
        [
          [1, 32, 120, 160],
          [32, 1, 3, 3],
        ],
        [1, 32, 60, 80],
      ),
    ).toBe('Conv dw3x3/s2');
    expect(
      kindOf(
        'Conv',
        [
          [1, 3, 240, 320],
          [16, 3, 3, 3],
        ],
        [1, 16, 120, 160],
      ),
    ).toBe('Conv 3x3/s2');
    // One input channel and one filter is an ordinary convolution, not a depthwise one.
    expect(
      kindOf(
        'Conv',
        [
          [1, 1, 64, 64],
          [1, 1, 3, 3],
        ],
        [1, 1, 64, 64],
      ),
    ).toBe('Conv 3x3');
    expect(
      kindOf(
        'PRelu',
        [
          [1, 64, 56, 56],
          [64, 1, 1],
        ],
        [1, 64, 56, 56],
      ),
    ).toBe('PRelu');
  });
});

describe('kernelTimes', () => {
  // Three runs of the same three nodes; the first is the warm-up.
  const node = (r: number) => [
    kernel('Conv_0', 'FusedConv', [[1, 8, 10, 10], [8, 8, 1, 1], [8]], [1, 8, 10, 10], [900, 40, 30][r]!),
    kernel('Conv_1', 'Conv', [[1, 8, 10, 10], [8, 8, 1, 1], [8], [1, 8, 10, 10]], [1, 8, 10, 10], [800, 20, 50][r]!),
    kernel('ReorderOutput', 'ReorderOutput', [[1, 8, 10, 10]], [1, 8, 10, 10], [700, 5, 6][r]!),
  ];
  const trace = [0, 1, 2].flatMap((r) => [...node(r), run(1000)]);

  it('keeps the fastest run of each node after the warm-up, and sums nodes of one kind and shape', () => {
    const t = kernelTimes(trace, 1);
    // Conv_0: min(40, 30); Conv_1: min(20, 50); the residual input of Conv_1 does not split the kind.
    expect([...t.values()].find((x) => x.kind === 'Conv 1x1')).toEqual({
      kind: 'Conv 1x1',
      shapes: '1x8x10x10,8x8x1x1 -> 1x8x10x10',
      nodes: 2,
      us: 50,
    });
    expect(t.get('Reorder')).toEqual({ kind: 'Reorder (NCHWc)', shapes: '', nodes: 1, us: 5 });
  });

  it('counts the warm-up when asked to skip nothing, and refuses runs of different lengths', () => {
    expect([...kernelTimes(trace, 0).values()].find((x) => x.kind === 'Conv 1x1')!.us).toBe(50);
    expect(() => kernelTimes([...trace, node(0)[0]!], 1)).toThrow(/different lengths/);
  });
});

describe('profileWasm', () => {
  it('reads the trace onnxruntime-web prints for a real model (fr_eye)', () => {
    const t = profileWasm('fr_eye', 3, {});
    const kinds = new Set([...t.values()].map((x) => x.kind));
    for (const k of ['Conv dw3x3', 'Conv 3x3', 'MaxPool']) expect(kinds).toContain(k);
    for (const x of t.values()) expect(x.us).toBeGreaterThan(0);
  }, 60_000);
});
