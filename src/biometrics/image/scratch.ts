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

// Model inputs: a tensor lives for one model run, across its await, so it cannot be a shared scratch array
// (another analysis in the same thread may fill its own meanwhile). Each is lent whole to one run and given
// back when the run is over; the next run of that size reuses it. A few are kept per size, for the analyses
// one thread may have running at once.
const lendable = new Map<number, Float32Array[]>();
const KEPT_PER_SIZE = 4;

/** A Float32Array of exactly `n` elements that no one else holds until it is given back; contents undefined. */
export function lendF32(n: number): Float32Array {
  return lendable.get(n)?.pop() ?? new Float32Array(n);
}

/** Gives back an array from {@link lendF32}: the caller must not read or write it any more. */
export function giveBackF32(a: Float32Array): void {
  let kept = lendable.get(a.length);
  if (!kept) lendable.set(a.length, (kept = []));
  if (kept.length < KEPT_PER_SIZE) kept.push(a);
}
