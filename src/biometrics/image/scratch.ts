// Reused working arrays of the image kernels. A face analysis ran 2-3 MB of short-lived typed arrays through
// V8's heap (the pose crop's filtered rows alone 2 MB), and their collection showed as CPU on the GC threads.
// Only for sums a kernel fills and reads within one synchronous call: never for a result handed back (an
// analysis awaits the models between kernels, and another analysis in the same thread may run meanwhile).

type Typed = Float64Array | Int32Array | Uint8Array;
const slots = new Map<string, Typed>();

function slot<T extends Typed>(name: string, make: (n: number) => T, n: number): T {
  const have = slots.get(name) as T | undefined;
  if (have && have.length >= n) return have;
  // Grow by half again, so a run of slightly larger images does not reallocate each time.
  const made = make(Math.max(n, Math.ceil((have?.length ?? 0) * 1.5)));
  slots.set(name, made);
  return made;
}

/** A Float64Array of at least `n` elements, shared by every call naming `name`; contents undefined. */
export const scratchF64 = (name: string, n: number) => slot(name, (m) => new Float64Array(m), n);
/** An Int32Array of at least `n` elements, shared by every call naming `name`; contents undefined. */
export const scratchI32 = (name: string, n: number) => slot(name, (m) => new Int32Array(m), n);
/** A Uint8Array of at least `n` elements, shared by every call naming `name`; contents undefined. */
export const scratchU8 = (name: string, n: number) => slot(name, (m) => new Uint8Array(m), n);

// Model inputs and decoded rasters: a tensor lives for one model run, a raster for one analysis, across awaits,
// so neither can be a shared scratch array (another analysis in the same thread may fill its own meanwhile).
// Each is lent whole to one holder and given back when it is done with it; the next of that size reuses it.
// A few are kept per size, for the analyses one thread may have running at once.
const KEPT_PER_SIZE = 4;

function lender<T extends Float32Array | Uint8Array>(make: (n: number) => T) {
  const kept = new Map<number, T[]>();
  return {
    lend: (n: number): T => kept.get(n)?.pop() ?? make(n),
    giveBack(a: T): void {
      let free = kept.get(a.length);
      if (!free) kept.set(a.length, (free = []));
      if (free.length < KEPT_PER_SIZE) free.push(a);
    },
  };
}
const f32 = lender<Float32Array>((n) => new Float32Array(n));
const u8 = lender<Uint8Array>((n) => new Uint8Array(n));

/** A Float32Array of exactly `n` elements that no one else holds until it is given back; contents undefined. */
export const lendF32 = f32.lend;
/** Gives back an array from {@link lendF32}: the caller must not read or write it any more. */
export const giveBackF32 = f32.giveBack;
/** A Uint8Array of exactly `n` bytes (offset 0) that no one else holds until it is given back; contents undefined. */
export const lendU8 = u8.lend;
/** Gives back an array from {@link lendU8}: the caller must not read or write it any more. */
export const giveBackU8 = u8.giveBack;
