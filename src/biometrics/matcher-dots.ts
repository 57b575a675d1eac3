// The matcher's dot-product kernels: which one this runtime can run, and one thread's use of it over a gallery
// memory. Every kernel returns the same exact int32 dot products; they differ only in speed.
import { fromBase64 } from '../encoding/base64.js';
import {
  DOT_I8_RELAXED_SHARED_WASM_BASE64,
  DOT_I8_RELAXED_WASM_BASE64,
  DOT_I8_SHARED_WASM_BASE64,
  DOT_I8_WASM_BASE64,
} from './matcher-kernel.js';

/**
 * Which kernel: 'auto' (relaxed SIMD where the runtime validates it, else SIMD, else JS), or one of them
 * ('relaxed' and 'simd' fall back like auto when the runtime cannot run them).
 */
export type KernelChoice = 'auto' | 'relaxed' | 'simd' | 'js';

/** The kernel a search actually ran. */
export type KernelName = 'wasm-relaxed-simd' | 'wasm-simd' | 'js';

/** Rows per kernel call: the scores of one call fit a thread's scratch slot. */
export const CHUNK = 16384;
/** Bytes of one thread's scratch slot in the gallery memory: the probe (up to 4 KiB) then CHUNK int32 scores. */
export const SLOT_BYTES = 4096 + CHUNK * 4;
/** The largest embedding the scratch slot holds (int16 probe, or pos and neg int8 halves). */
export const MAX_DIMS = 2048;

interface KernelModules {
  simd: WebAssembly.Module | null;
  relaxed: WebAssembly.Module | null;
}

const cache = new Map<boolean, KernelModules>();

function compile(b64: string): WebAssembly.Module | null {
  try {
    const bin = fromBase64(b64);
    // Cloudflare Workers forbid compiling wasm from bytes at run time, runtimes without relaxed SIMD refuse that
    // module: validate() says so without throwing, and the next kernel down is used.
    return WebAssembly.validate(bin) ? new WebAssembly.Module(bin) : null;
  } catch {
    return null;
  }
}

/** Why the relaxed kernel is or is not used: the runtime lacks relaxed SIMD, or it ran it and got other sums. */
type RelaxedStatus = 'exact' | 'inexact' | 'unsupported';
const relaxedStatuses = new Map<boolean, RelaxedStatus>();

/**
 * The kernels this runtime compiles, for a private or a shared (SharedArrayBuffer) memory. The relaxed kernel
 * is kept only if it passes `exactOn` here: relaxed instructions may differ between engines by design, and
 * Node 20's V8 (relaxed SIMD behind a flag) returns wrong sums for some rows, which this check catches.
 */
export function kernelModules(shared: boolean): KernelModules {
  let m = cache.get(shared);
  if (!m) {
    m = shared
      ? { simd: compile(DOT_I8_SHARED_WASM_BASE64), relaxed: compile(DOT_I8_RELAXED_SHARED_WASM_BASE64) }
      : { simd: compile(DOT_I8_WASM_BASE64), relaxed: compile(DOT_I8_RELAXED_WASM_BASE64) };
    let status: RelaxedStatus = m.relaxed ? 'exact' : 'unsupported';
    if (m.relaxed && !exactOn(m.relaxed, shared)) {
      m.relaxed = null;
      status = 'inexact';
    }
    relaxedStatuses.set(shared, status);
    cache.set(shared, m);
  }
  return m;
}

/** Whether this runtime uses the relaxed kernel, and if not why. */
export function relaxedStatus(shared = false): RelaxedStatus {
  kernelModules(shared);
  return relaxedStatuses.get(shared)!;
}

/**
 * Known-answer check of the relaxed kernel: 13 rows of 64 (its four-stream passes and the rows left over)
 * holding the extremes (-128, 127, alternating, zeros) and pseudo-random bytes, against four probes, compared
 * with a plain loop. About 30 000 multiply-adds, once per process.
 */
function exactOn(mod: WebAssembly.Module, shared: boolean): boolean {
  try {
    const dims = 64,
      n = 13,
      rowsAt = 4096,
      outAt = 2048;
    const mem = shared
      ? new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true })
      : new WebAssembly.Memory({ initial: 1 });
    const dots = new WebAssembly.Instance(mod, { env: { mem } }).exports.dots as DotsFn;
    const bytes = new Int8Array(mem.buffer);
    let s = 0x9e3779b9;
    const rand = () => {
      s ^= s << 13;
      s >>>= 0;
      s ^= s >>> 17;
      s ^= s << 5;
      s >>>= 0;
      return (s >>> 24) - 128;
    };
    const edge = [
      (_k: number) => -128,
      () => 127,
      (k: number) => (k % 2 ? -128 : 127),
      () => 0,
      (k: number) => (k % 3 ? 1 : -128),
    ];
    for (let i = 0; i < n; i++)
      for (let k = 0; k < dims; k++) bytes[rowsAt + i * dims + k] = edge[i] ? edge[i](k) : rand();
    const probes = [() => rand() % 128, () => -127, () => 127, (k: number) => (k % 2 ? 127 : -127)];
    for (const f of probes) {
      const p = Int8Array.from({ length: dims }, (_, k) => f(k));
      for (let k = 0; k < dims; k++) {
        bytes[k] = p[k] > 0 ? p[k] : 0;
        bytes[dims + k] = p[k] < 0 ? -p[k] : 0;
      }
      dots(0, rowsAt, n, dims, outAt);
      const out = new Int32Array(mem.buffer, outAt, n);
      for (let i = 0; i < n; i++) {
        let want = 0;
        for (let k = 0; k < dims; k++) want += p[k] * bytes[rowsAt + i * dims + k];
        if (out[i] !== want) return false;
      }
    }
    return true;
  } catch {
    return false;
  }
}

type DotsFn = (probe: number, rows: number, n: number, dims: number, out: number) => void;

/**
 * One thread's kernels over a gallery memory: `dots(probe, first, n)` gives the exact dot products of the probe
 * with rows first..first+n-1. The thread's probe and scores live in its own scratch slot of that memory, so
 * threads sharing the memory never write the same bytes. Instances carry no gallery state.
 */
export class DotKernel {
  private readonly simd: DotsFn | null;
  private readonly relaxed: DotsFn | null;
  private readonly probeAt: number;
  private readonly outAt: number;
  /** Scores of the JS kernel. */
  private readonly jsOut = new Int32Array(CHUNK);

  /**
   * @param memory the gallery memory (rows from `rowsAt`, `dims` bytes each; `rowsOf` views them for the JS kernel).
   * @param slot this thread's scratch slot.
   */
  constructor(
    private readonly memory: WebAssembly.Memory,
    private readonly rowsOf: () => Int8Array,
    private readonly rowsAt: number,
    private readonly dims: number,
    slot: number,
    choice: KernelChoice,
    modules: KernelModules | null,
  ) {
    this.probeAt = slot * SLOT_BYTES;
    this.outAt = this.probeAt + 4096;
    const useWasm = modules && choice !== 'js' && dims % 32 === 0 && dims <= MAX_DIMS;
    const inst = (m: WebAssembly.Module | null) =>
      m ? (new WebAssembly.Instance(m, { env: { mem: memory } }).exports.dots as DotsFn) : null;
    this.simd = useWasm ? inst(modules.simd) : null;
    this.relaxed = useWasm && choice !== 'simd' ? inst(modules.relaxed) : null;
  }

  /** The kernel a search with this probe runs. */
  kernelFor(probe: Int8Array): KernelName {
    if (this.relaxed && !probe.includes(-128)) return 'wasm-relaxed-simd';
    return this.simd ? 'wasm-simd' : 'js';
  }

  /** Best kernel available to this thread (for a probe without -128). */
  get name(): KernelName {
    return this.relaxed ? 'wasm-relaxed-simd' : this.simd ? 'wasm-simd' : 'js';
  }

  /**
   * Prepares the probe for `dots`; returns the kernel it will use. The relaxed kernel's second operand must lie
   * in 0..127 (matcher-kernel's dot-i8-relaxed.wat), so its probe is split into positive and negative parts; a
   * probe with -128 has no such split and takes the plain SIMD kernel.
   */
  setProbe(probe: Int8Array): KernelName {
    const kind = this.kernelFor(probe);
    if (kind === 'wasm-relaxed-simd') {
      const b = new Int8Array(this.memory.buffer, this.probeAt, 2 * this.dims);
      for (let k = 0; k < this.dims; k++) {
        const v = probe[k];
        b[k] = v > 0 ? v : 0;
        b[this.dims + k] = v < 0 ? -v : 0;
      }
    } else if (kind === 'wasm-simd') new Int16Array(this.memory.buffer, this.probeAt, this.dims).set(probe);
    this.kind = kind;
    this.probe = probe;
    return kind;
  }
  private kind: KernelName = 'js';
  private probe: Int8Array = new Int8Array(0);

  /** out[i] = dot(probe, row first + i) for i < n <= CHUNK, exact int32 (a view valid until the next call). */
  dots(first: number, n: number): Int32Array {
    const dims = this.dims;
    if (this.kind !== 'js') {
      (this.kind === 'wasm-relaxed-simd' ? this.relaxed! : this.simd!)(
        this.probeAt,
        this.rowsAt + first * dims,
        n,
        dims,
        this.outAt,
      );
      return new Int32Array(this.memory.buffer, this.outAt, n);
    }
    const g = this.rowsOf();
    const p = this.probe;
    const out = this.jsOut;
    for (let i = 0; i < n; i++) {
      let s0 = 0,
        s1 = 0,
        s2 = 0,
        s3 = 0;
      const o = (first + i) * dims;
      for (let k = 0; k < dims; k += 4) {
        s0 += p[k] * g[o + k];
        s1 += p[k + 1] * g[o + k + 1];
        s2 += p[k + 2] * g[o + k + 2];
        s3 += p[k + 3] * g[o + k + 3];
      }
      out[i] = s0 + s1 + s2 + s3;
    }
    return out.subarray(0, n);
  }
}
