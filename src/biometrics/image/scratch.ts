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
