// Every matcher kernel gives the exact int32 dot products of a plain JS loop: the relaxed-SIMD one (turned on
// here: Node 20 keeps it behind a V8 flag) where the runtime's known-answer check accepted it, the SIMD one and
// the JS fallback, on private and shared memory, over random rows and the edge values (-128 and 127 everywhere,
// alternating signs, zeros) and every row count around the kernel's four streams. Node 20's V8 fails that check
// (wrong sums from its experimental relaxed dot), so here the relaxed choice must fall back to SIMD; the check
// itself is held to what the raw relaxed module computes.
import { fromBase64 } from '../encoding/base64.js';
import { setFlagsFromString } from 'node:v8';
import { describe, expect, it, vi } from 'vitest';
import type { KernelChoice } from './matcher-dots.js';
import { DOT_I8_RELAXED_WASM_BASE64 } from './matcher-kernel.js';
import { RowStore } from './matcher-store.js';

setFlagsFromString('--experimental-wasm-relaxed-simd');
// A fresh instance of the kernels' module, whose cache has not yet compiled without the flag (another file of this
// fork may have loaded it before).
vi.resetModules();
const { DotKernel, kernelModules, relaxedStatus } = await import('./matcher-dots.js');

function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
}

/** Rows: the edge rows first, then random bytes over the whole int8 range. */
function rowsOf(n: number, dims: number, seed: number): Int8Array[] {
  const r = rng(seed);
  const edge = [
    new Int8Array(dims).fill(-128),
    new Int8Array(dims).fill(127),
    Int8Array.from({ length: dims }, (_, k) => (k % 2 ? -128 : 127)),
    new Int8Array(dims),
    Int8Array.from({ length: dims }, (_, k) => (k % 3 === 0 ? -128 : k % 3 === 1 ? 1 : -1)),
  ];
  return Array.from({ length: n }, (_, i) => edge[i] ?? Int8Array.from({ length: dims }, () => (r() >>> 24) - 128));
}

function probesOf(dims: number, seed: number): { name: string; q: Int8Array }[] {
  const r = rng(seed);
  return [
    { name: 'random -127..127', q: Int8Array.from({ length: dims }, () => (r() % 255) - 127) },
    { name: 'all -127', q: new Int8Array(dims).fill(-127) },
    { name: 'all 127', q: new Int8Array(dims).fill(127) },
    { name: 'alternating 127/-127', q: Int8Array.from({ length: dims }, (_, k) => (k % 2 ? 127 : -127)) },
    { name: 'with -128', q: Int8Array.from({ length: dims }, (_, k) => (k % 5 === 0 ? -128 : (r() % 255) - 127)) },
    { name: 'all -128', q: new Int8Array(dims).fill(-128) },
  ];
}

const reference = (p: Int8Array, row: Int8Array) => {
  let s = 0;
  for (let k = 0; k < p.length; k++) s += p[k] * row[k];
  return s;
};

describe('matcher kernels', () => {
  it('this runtime validates both wasm kernels; the relaxed one is used exactly when its sums are right', () => {
    const bin = fromBase64(DOT_I8_RELAXED_WASM_BASE64);
    expect(WebAssembly.validate(bin)).toBe(true);
    // the raw relaxed module on rows of extremes and random bytes, 8 rows (two four-stream passes)
    const dims = 64,
      n = 8,
      mem = new WebAssembly.Memory({ initial: 2 });
    const dots = new WebAssembly.Instance(new WebAssembly.Module(bin), { env: { mem } }).exports.dots as (
      ...a: number[]
    ) => void;
    const rows = rowsOf(n, dims, 3);
    rows.forEach((row, i) => new Int8Array(mem.buffer, 8192 + i * dims, dims).set(row));
    let allExact = true;
    for (const { q } of probesOf(dims, 4).filter((p) => !p.q.includes(-128))) {
      const b = new Int8Array(mem.buffer, 0, 2 * dims);
      q.forEach((v, k) => {
        b[k] = Math.max(v, 0);
        b[dims + k] = Math.max(-v, 0);
      });
      dots(0, 8192, n, dims, 4096);
      const got = [...new Int32Array(mem.buffer, 4096, n)];
      if (JSON.stringify(got) !== JSON.stringify(rows.map((row) => reference(q, row)))) allExact = false;
    }
    for (const shared of [false, true]) {
      expect(kernelModules(shared).simd).not.toBeNull();
      expect(relaxedStatus(shared)).toBe(allExact ? 'exact' : 'inexact');
      expect(kernelModules(shared).relaxed === null).toBe(!allExact);
    }
  });

  describe.each([false, true])('shared memory: %s', (shared) => {
    it.each([512, 256, 32])('give the JS reference integers, dims %i, every row count 1..13 and 4099', (dims) => {
      for (const n of [1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 4099]) {
        const rows = rowsOf(n, dims, n * 7 + dims);
        const store = new RowStore(dims, 1, shared);
        rows.forEach((row, i) => store.append(row, i + 1));
        for (const { name, q } of probesOf(dims, n)) {
          const want = rows.map((row) => reference(q, row));
          for (const choice of ['relaxed', 'simd', 'js'] as KernelChoice[]) {
            const k = new DotKernel(
              store.rowsMemory,
              () => store.rows(),
              store.rowsAt,
              dims,
              0,
              choice,
              kernelModules(store.shared),
            );
            const ran = k.setProbe(q);
            // -128 in the probe has no split into two halves of 0..127: the relaxed choice takes the SIMD kernel
            const relaxed = relaxedStatus(shared) === 'exact';
            const expected =
              choice === 'js'
                ? 'js'
                : choice === 'simd' || q.includes(-128) || !relaxed
                  ? 'wasm-simd'
                  : 'wasm-relaxed-simd';
            expect(ran, `${choice} ${name}`).toBe(expected);
            const got: number[] = [];
            for (let start = 0; start < n; start += 1000) got.push(...k.dots(start, Math.min(1000, n - start)));
            expect(got, `${choice} kernel, probe ${name}, ${n} rows of ${dims}`).toEqual(want);
          }
        }
      }
    });
  });
});
