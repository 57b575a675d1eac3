import { describe, expect, it } from 'vitest';
import { PickleFormatError, readPickle, TensorRef, UnsafePickleError } from '../../scripts/voice-model/pickle.js';

const enc = (s: string) => new TextEncoder().encode(s);
const bytes = (...parts: (number[] | string)[]) =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === 'string' ? [...enc(p)] : p)));

/** The data-only pickle reader of the voice-model converter: data in, nothing called. */
describe('readPickle', () => {
  it('reads containers, scalars, memo references and an OrderedDict of tensors', () => {
    const pkl = bytes(
      [0x80, 2, 0x7d, 0x71, 0], // PROTO 2, EMPTY_DICT, BINPUT 0
      [0x28], // MARK
      [0x8c, 1],
      'a',
      [0x4a, 0xff, 0xff, 0xff, 0xff], // 'a': -1
      [0x8c, 1],
      'b',
      [0x47, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0], // 'b': 1.5
      [0x8c, 1],
      'c',
      [0x8a, 9, 0, 0, 0, 0, 0, 0, 0, 0, 1], // 'c': 2^64
      [0x8c, 1],
      'd',
      [0x5d, 0x28, 0x88, 0x89, 0x4e, 0x65], // 'd': [True, False, None]
      [0x8c, 1],
      'e',
      'ccollections\nOrderedDict\n',
      [0x29, 0x52, 0x28, 0x8c, 1],
      'w',
      'ctorch._utils\n_rebuild_tensor_v2\n',
      [0x28, 0x8c, 1],
      'S',
      [0x4b, 2, 0x4b, 3, 0x85, 0x4b, 1, 0x85, 0x89],
      'ccollections\nOrderedDict\n',
      [0x29, 0x52, 0x74, 0x52, 0x75],
      [0x8c, 1],
      'f',
      [0x68, 0], // 'f': the dict itself, by memo
      [0x75, 0x2e], // SETITEMS STOP
    );
    const { value, end } = readPickle(pkl, 0, { persistentLoad: () => null });
    expect(end).toBe(pkl.length);
    const d = value as Map<string, unknown>;
    expect(d.get('a')).toBe(-1);
    expect(d.get('b')).toBe(1.5);
    expect(d.get('c')).toBe(2n ** 64n);
    expect(d.get('d')).toEqual([true, false, null]);
    expect(d.get('f')).toBe(d);
    const t = (d.get('e') as Map<string, TensorRef>).get('w')!;
    expect(t).toBeInstanceOf(TensorRef);
    expect(t).toMatchObject({ storage: 'S', offset: 2, shape: [3], stride: [1] });
  });

  it.each([
    [
      'a global outside the allowlist (GLOBAL)',
      bytes([0x80, 2], 'cbuiltins\neval\n', [0x8c, 1], '1', [0x85, 0x52, 0x2e]),
      /global builtins\.eval, which is not allowed/,
    ],
    [
      'a global outside the allowlist (STACK_GLOBAL)',
      bytes([0x80, 4, 0x8c, 5], 'posix', [0x8c, 6], 'system', [0x93, 0x2e]),
      /global posix\.system/,
    ],
    ['torch functions beyond the rebuilders', bytes([0x80, 2], 'ctorch\nload\n', [0x2e]), /global torch\.load/],
    ['NEWOBJ', bytes([0x80, 2, 0x29, 0x29, 0x81, 0x2e]), /uses NEWOBJ/],
    ['INST', bytes([0x80, 2, 0x28], 'ios\nsystem\n', [0x2e]), /uses INST/],
    [
      'REDUCE of a plain value',
      bytes([0x80, 2, 0x4b, 1, 0x29, 0x52, 0x2e]),
      /REDUCE of something that is not an allowed global/,
    ],
    ['BUILD on a list', bytes([0x80, 2, 0x5d, 0x7d, 0x62, 0x2e]), /BUILD/],
    ['a persistent id with no loader', bytes([0x80, 2, 0x4b, 1, 0x51, 0x2e]), /persistent id/],
  ])('refuses %s', (_what, pkl, message) => {
    expect(() => readPickle(pkl)).toThrow(UnsafePickleError);
    expect(() => readPickle(pkl)).toThrow(message);
  });

  it.each([
    ['a truncated string', bytes([0x80, 2, 0x58, 100, 0, 0, 0], 'abc')],
    ['a stack underflow', bytes([0x80, 2, 0x73, 0x2e])],
    ['an unknown opcode', bytes([0x80, 2, 0xff])],
    ['a missing STOP', bytes([0x80, 2, 0x4b, 1])],
    ['a memo never stored', bytes([0x80, 2, 0x68, 7, 0x2e])],
  ])('reports %s as a format error', (_what, pkl) => {
    expect(() => readPickle(pkl)).toThrow(PickleFormatError);
  });
});
