// Where a gallery partition keeps its rows: int8 templates in a WebAssembly memory (shared with matcher threads
// when it is a SharedArrayBuffer), and per row its inverse norm, subject number and the generation it was
// removed at. Rows are only appended or marked removed while a search may be reading them; removed rows are
// given back (the last row moved into each hole) only when no search is in flight, so a search sees exactly
// the rows of the generation it started at.
import { MAX_DIMS, SLOT_BYTES } from './matcher-dots.js';

/** The `died` stamp of a row that is still in the gallery. */
export const ALIVE = 0x7fffffff;
/**
 * Bytes of per-row data: float64 inverse norm, int32 subject number, int32 generation removed at, int32 number of
 * samples of the row's subject (a subject's score depends on it: subject-score.ts), 4 bytes unused.
 */
const META_BYTES = 24;
const PAGE = 65536;
/** A shared memory must declare a maximum: the whole 32-bit address space (4 GiB, ~8M rows of 512 bytes). */
const MAX_PAGES = 65536;

/** What a matcher thread needs to read a shared partition (posted once per thread). */
export interface SharedRows {
  rows: WebAssembly.Memory;
  meta: WebAssembly.Memory;
  rowsAt: number;
  dims: number;
}

/** Typed views over the per-row data (renewed when the memory grows). */
export interface RowMeta {
  /** inv[3r]: 1 / |row r| (0 for a zero row). */
  inv: Float64Array;
  /**
   * ints[6r + 2]: subject number of row r; ints[6r + 3]: generation it was removed at, ALIVE if present;
   * ints[6r + 4]: number of samples (rows) of that subject.
   */
  ints: Int32Array;
}

export function metaViews(meta: WebAssembly.Memory): RowMeta {
  return { inv: new Float64Array(meta.buffer), ints: new Int32Array(meta.buffer) };
}

function newMemory(bytes: number, shared: boolean): WebAssembly.Memory {
  const initial = Math.max(1, Math.ceil(bytes / PAGE));
  return shared
    ? new WebAssembly.Memory({ initial, maximum: MAX_PAGES, shared: true })
    : new WebAssembly.Memory({ initial });
}

/** Grows `mem` to at least `bytes`, by at least half again so appends copy (private memory) rarely. */
function ensure(mem: WebAssembly.Memory, bytes: number): boolean {
  const have = mem.buffer.byteLength;
  if (bytes <= have) return false;
  const need = Math.ceil((bytes - have) / PAGE);
  const pages = Math.max(need, Math.ceil(have / PAGE / 2));
  try {
    mem.grow(pages);
  } catch {
    mem.grow(need);
  }
  return true;
}

export class RowStore {
  readonly rowsMemory: WebAssembly.Memory;
  readonly metaMemory: WebAssembly.Memory;
  /** Byte offset of row 0: the threads' scratch slots come first. */
  readonly rowsAt: number;
  readonly shared: boolean;
  /** Rows in use, removed ones not yet given back included. */
  count = 0;
  /** Bumped by every change; a search reads the rows alive at the generation it started at. */
  generation = 0;
  /** Removed rows not yet given back. */
  private holes: number[] = [];
  private rowView!: Int8Array;
  private metaView!: RowMeta;

  /**
   * @param slots scratch slots (one per thread that scans: this one and each matcher thread).
   * @param shared a SharedArrayBuffer memory (falls back to a private one where the runtime has none).
   */
  constructor(
    readonly dims: number,
    slots: number,
    shared: boolean,
  ) {
    if (dims > MAX_DIMS) throw new RangeError(`embedding length ${dims} over ${MAX_DIMS}`);
    this.rowsAt = Math.ceil((slots * SLOT_BYTES) / 64) * 64;
    let isShared = shared && typeof SharedArrayBuffer !== 'undefined';
    let rows: WebAssembly.Memory, meta: WebAssembly.Memory;
    try {
      rows = newMemory(this.rowsAt + 1024 * dims, isShared);
      meta = newMemory(1024 * META_BYTES, isShared);
    } catch {
      // a browser page that is not cross-origin isolated has no shared memory
      isShared = false;
      rows = newMemory(this.rowsAt + 1024 * dims, false);
      meta = newMemory(1024 * META_BYTES, false);
    }
    this.shared = isShared;
    this.rowsMemory = rows;
    this.metaMemory = meta;
    this.refresh();
  }

  private refresh(): void {
    this.rowView = new Int8Array(this.rowsMemory.buffer, this.rowsAt);
    this.metaView = metaViews(this.metaMemory);
  }

  /** Row bytes from row 0 (renewed view: the memory may have grown). */
  rows(): Int8Array {
    if (
      this.rowView.buffer.byteLength !== this.rowsMemory.buffer.byteLength ||
      this.rowView.buffer !== this.rowsMemory.buffer
    )
      this.refresh();
    return this.rowView;
  }

  meta(): RowMeta {
    if (
      this.metaView.inv.buffer !== this.metaMemory.buffer ||
      this.metaView.inv.byteLength !== this.metaMemory.buffer.byteLength
    )
      this.refresh();
    return this.metaView;
  }

  /** What a matcher thread is posted to read this store. */
  sharedRows(): SharedRows {
    return { rows: this.rowsMemory, meta: this.metaMemory, rowsAt: this.rowsAt, dims: this.dims };
  }

  /** Removed rows waiting to be given back. */
  get removedRows(): number {
    return this.holes.length;
  }

  /** Appends a row; returns its index. */
  append(q: Int8Array, subject: number): number {
    const r = this.count;
    const grewRows = ensure(this.rowsMemory, this.rowsAt + (r + 1) * this.dims);
    const grewMeta = ensure(this.metaMemory, (r + 1) * META_BYTES);
    if (grewRows || grewMeta) this.refresh();
    this.rowView.set(q, r * this.dims);
    let n = 0;
    for (let i = 0; i < q.length; i++) n += q[i] * q[i];
    this.metaView.inv[3 * r] = n ? 1 / Math.sqrt(n) : 0;
    this.metaView.ints[6 * r + 2] = subject;
    this.metaView.ints[6 * r + 3] = ALIVE;
    this.metaView.ints[6 * r + 4] = 1;
    this.count++;
    this.generation++;
    return r;
  }

  /** Records that these rows are all the samples of their subject. */
  setSamples(rows: readonly number[]): void {
    const ints = this.meta().ints;
    for (const r of rows) ints[6 * r + 4] = rows.length;
  }

  /** Marks rows removed as of a new generation; their bytes stay until `compact`. */
  kill(rows: readonly number[]): void {
    if (!rows.length) return;
    this.generation++;
    const ints = this.meta().ints;
    for (const r of rows) {
      ints[6 * r + 3] = this.generation;
      this.holes.push(r);
    }
  }

  /**
   * Gives back removed rows, moving the last rows into the holes; call only when no search is reading.
   * `moved(from, to)` is told of every move so the owner can follow its rows.
   */
  compact(moved: (from: number, to: number, subject: number) => void): void {
    if (!this.holes.length) return;
    const holes = this.holes.sort((a, b) => b - a);
    this.holes = [];
    const rows = this.rows();
    const { inv, ints } = this.meta();
    const dims = this.dims;
    for (const h of holes) {
      while (this.count > 0 && ints[6 * (this.count - 1) + 3] !== ALIVE) this.count--;
      if (h >= this.count) continue;
      const last = this.count - 1;
      rows.copyWithin(h * dims, last * dims, (last + 1) * dims);
      inv[3 * h] = inv[3 * last];
      ints[6 * h + 2] = ints[6 * last + 2];
      ints[6 * h + 3] = ALIVE;
      ints[6 * h + 4] = ints[6 * last + 4];
      moved(last, h, ints[6 * last + 2]);
      this.count--;
    }
    while (this.count > 0 && ints[6 * (this.count - 1) + 3] !== ALIVE) this.count--;
    this.generation++;
  }

  /** Empties the store (no search may be reading). */
  reset(): void {
    this.count = 0;
    this.holes = [];
    this.generation++;
  }
}
