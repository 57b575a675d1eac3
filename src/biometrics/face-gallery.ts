import { BiometricError } from './errors.js';
import { FACE_CALIBRATION, type Calibration } from './calibration.js';
import { DotKernel, kernelModules, type KernelChoice, type KernelName } from './matcher-dots.js';
import { mergeHits, scanRows, type ScanHits, type ScanTask } from './matcher-scan.js';
import { RowStore } from './matcher-store.js';
import { subjectScore } from './subject-score.js';
import {
  recordOf,
  type IdentifyOptions,
  type MatchCandidate,
  type MatcherThreads,
  type Probe,
  type SharedPartition,
} from './matcher-types.js';
import { parseTemplate } from './template.js';

let partitionKeys = 0;

/** Options of a partition. */
interface FaceGalleryOptions {
  /**
   * 'auto' (relaxed SIMD where the runtime validates it, else SIMD, else JS), 'relaxed', 'simd' or 'js'. Every
   * kernel gives the same exact integers.
   */
  kernel?: KernelChoice;
  calibration?: Calibration;
  /** Matcher threads for `identifyAsync`: the rows then live in a SharedArrayBuffer they read. */
  threads?: MatcherThreads;
}

/**
 * An exact 1:1 / 1:N matcher over int8 templates of ONE template version. Each subject may hold several
 * templates; a search scores a subject by its best template and its number of templates (subject-score.ts). Rows live in one contiguous int8 store (a
 * WebAssembly memory, shared with matcher threads when there are some) and are compared exhaustively: no
 * approximation. `identify` scans on the calling thread; `identifyAsync` splits the scan across the matcher
 * threads and merges their top-K exactly. Changes made while a threaded search runs never disturb it: it
 * answers for the gallery as it was when it started (removed rows keep their bytes until no search reads them).
 *
 * @example
 * const g = new FaceGallery(ex.templateVersion);
 * g.replace('subject-1', [templateBytes]);
 * g.identify(probeBytes, { topK: 5, threshold: 48 }); // [{ subject, score, cosine }]
 */
export class FaceGallery {
  private readonly store: RowStore;
  private readonly dotKernel: DotKernel;
  private readonly threads: MatcherThreads | undefined;
  private readonly shared: SharedPartition | undefined;
  /** Subject -> number; numbers are never reused, so a search in flight can name a subject removed since. */
  private readonly subjectNumber = new Map<string, number>();
  private readonly subjectName = new Map<number, string>();
  private readonly subjectRows = new Map<number, number[]>();
  private readonly retired: number[] = [];
  private nextSubject = 1;
  private liveRows = 0;
  /** Threaded searches in flight: while any is, rows are only appended or marked removed. */
  private inFlight = 0;
  private readonly calibration: Calibration;

  /**
   * @param templateVersion only templates of this version are accepted.
   * @param dims embedding length (a multiple of 32 for the SIMD kernels; 512 for faces).
   */
  constructor(
    readonly templateVersion: string,
    readonly dims = 512,
    options: FaceGalleryOptions = {},
  ) {
    const choice = options.kernel ?? 'auto';
    this.threads = options.threads && options.threads.size > 0 ? options.threads : undefined;
    this.store = new RowStore(dims, 1 + (this.threads?.size ?? 0), !!this.threads);
    const modules = choice === 'js' ? null : kernelModules(this.store.shared);
    const rows = this.store.rowsMemory;
    this.dotKernel = new DotKernel(rows, () => this.store.rows(), this.store.rowsAt, dims, 0, choice, modules);
    if (this.threads && this.store.shared)
      this.shared = {
        ...this.store.sharedRows(),
        key: ++partitionKeys,
        kernel: choice,
        calibration: (options.calibration ?? FACE_CALIBRATION).table,
      };
    else this.threads = undefined;
    this.calibration = options.calibration ?? FACE_CALIBRATION;
  }

  /** True when a WebAssembly SIMD kernel is in use. */
  get simd(): boolean {
    return this.dotKernel.name !== 'js';
  }

  /** The kernel a search with an ordinary probe runs ('wasm-relaxed-simd', 'wasm-simd' or 'js'). */
  get kernel(): KernelName {
    return this.dotKernel.name;
  }

  /** True when `identifyAsync` splits searches across matcher threads. */
  get threaded(): boolean {
    return !!this.threads;
  }

  /** Number of templates. */
  get size(): number {
    return this.liveRows;
  }

  /** Number of subjects. */
  get subjects(): number {
    return this.subjectRows.size;
  }

  has(subject: string): boolean {
    return this.subjectNumber.has(subject);
  }

  private toInt8(p: Probe): Int8Array {
    let q: Int8Array;
    if (p instanceof Int8Array) q = p;
    else if (p instanceof Uint8Array) {
      const t = parseTemplate(p);
      if (t.templateVersion !== this.templateVersion) {
        throw new BiometricError(
          'TEMPLATE_VERSION_MISMATCH',
          `template version ${t.templateVersion} does not match gallery ${this.templateVersion}`,
        );
      }
      const r = recordOf(t);
      if (!r) throw new BiometricError('INVALID_TEMPLATE', 'template has no record');
      q = r.q;
    } else q = p.q;
    if (q.length !== this.dims)
      throw new BiometricError(
        'INVALID_TEMPLATE',
        `embedding has ${q.length} components, gallery expects ${this.dims}`,
      );
    return q;
  }

  /** Adds one more template for `subject`. */
  add(subject: string, template: Probe): void {
    const q = this.toInt8(template);
    const s = this.subjectNumber.get(subject);
    if (s === undefined) return this.put(subject, [q]);
    // Every row of a subject carries its number of samples, which a search in flight must not see change: the
    // subject's rows are appended again with the new count and the old ones removed as of this generation.
    const old = this.subjectRows.get(s)!;
    const dims = this.dims;
    const bytes = old.map((r) => this.store.rows().slice(r * dims, (r + 1) * dims));
    const rows = [...bytes, q].map((b) => this.store.append(b, s));
    this.store.setSamples(rows);
    this.subjectRows.set(s, rows);
    this.store.kill(old);
    this.liveRows++;
    this.tidy();
  }

  /** Replaces every template of `subject` (an empty list removes it). */
  replace(subject: string, templates: Probe[]): void {
    const qs = templates.map((t) => this.toInt8(t)); // validate all before changing anything
    this.remove(subject);
    if (qs.length) this.put(subject, qs);
  }

  /** A new subject with these templates. */
  private put(subject: string, qs: Int8Array[]): void {
    const s = this.nextSubject++;
    this.subjectNumber.set(subject, s);
    this.subjectName.set(s, subject);
    const rows = qs.map((q) => this.store.append(q, s));
    this.store.setSamples(rows);
    this.subjectRows.set(s, rows);
    this.liveRows += rows.length;
  }

  /** Removes `subject` and its templates; returns false if it was absent. */
  remove(subject: string): boolean {
    const s = this.subjectNumber.get(subject);
    if (s === undefined) return false;
    const rows = this.subjectRows.get(s)!;
    this.subjectNumber.delete(subject);
    this.subjectRows.delete(s);
    this.retired.push(s);
    this.store.kill(rows);
    this.liveRows -= rows.length;
    this.tidy();
    return true;
  }

  /** Removes everything. */
  clear(): void {
    for (const subject of [...this.subjectNumber.keys()]) this.remove(subject);
  }

  /** Gives back removed rows and forgets removed subjects once no search can still name them. */
  private tidy(): void {
    if (this.inFlight > 0) return;
    this.store.compact((from, to, s) => {
      const rows = this.subjectRows.get(s)!;
      rows[rows.indexOf(from)] = to;
    });
    for (const s of this.retired) this.subjectName.delete(s);
    this.retired.length = 0;
  }

  /**
   * 1:1: the probe against `subject`'s templates, scored by the best and their number (subject-score.ts); null
   * when the subject is not in the gallery.
   */
  verify(probe: Probe, subject: string): MatchCandidate | null {
    const s = this.subjectNumber.get(subject);
    if (s === undefined) return null;
    const q = this.toInt8(probe);
    const pn = norm(q);
    const ipn = 1 / pn; // as the scan computes a cosine, so VERIFY and IDENTIFY agree to the last bit
    const store = this.store.rows();
    const { inv } = this.store.meta();
    let best = -1;
    const rows = this.subjectRows.get(s)!;
    for (const r of rows) {
      let d = 0;
      const o = r * this.dims;
      for (let k = 0; k < this.dims; k++) d += q[k] * store[o + k];
      best = Math.max(best, pn && inv[3 * r] ? d * inv[3 * r] * ipn : 0);
    }
    return { subject, cosine: best, score: subjectScore(this.calibration.cosineToScore(best), rows.length) };
  }

  private task(q: Int8Array, opts: IdentifyOptions, from: number, to: number): ScanTask {
    const ex = opts.exclude;
    const excluded: number[] = [];
    if (ex && typeof ex !== 'function')
      for (const subject of ex) {
        const s = this.subjectNumber.get(subject);
        if (s !== undefined) excluded.push(s);
      }
    return {
      probe: q,
      from,
      to,
      generation: this.store.generation,
      threshold: opts.threshold ?? 0,
      topK: Math.max(1, opts.topK ?? 10),
      excluded: Int32Array.from(excluded).sort(),
    };
  }

  private answer(hits: ScanHits): MatchCandidate[] {
    return hits.subjects.map((s, i) => ({
      subject: this.subjectName.get(s)!,
      cosine: hits.cosines[i],
      score: hits.scores[i],
    }));
  }

  /**
   * 1:N exhaustive search on this thread: the `topK` subjects with the highest scores at or above `threshold`,
   * best first.
   */
  identify(probe: Probe, opts: IdentifyOptions = {}): MatchCandidate[] {
    const q = this.toInt8(probe);
    const task = this.task(q, opts, 0, this.store.count);
    const ex = opts.exclude;
    const dropped = typeof ex === 'function' ? (s: number) => ex(this.subjectName.get(s)!) : undefined;
    return this.answer(scanRows(this.dotKernel, this.store.meta(), task, this.calibration, dropped));
  }

  /**
   * 1:N exhaustive search split across the matcher threads (the same answer as `identify`, merged exactly);
   * on this thread when there are none or `exclude` is a function.
   */
  async identifyAsync(probe: Probe, opts: IdentifyOptions = {}): Promise<MatchCandidate[]> {
    const threads = this.threads;
    const count = this.store.count;
    if (!threads || typeof opts.exclude === 'function' || count < (threads.minRows ?? 0))
      return this.identify(probe, opts);
    const q = this.toInt8(probe);
    const parts = threads.size;
    // slices of whole groups of four rows (the kernel's pass), as even as that allows
    const step = Math.ceil(count / parts / 4) * 4;
    this.inFlight++;
    try {
      const slices: Promise<ScanHits>[] = [];
      for (let t = 0; t < parts; t++) {
        const from = Math.min(count, t * step),
          to = Math.min(count, (t + 1) * step);
        if (to > from) slices.push(threads.scan(t, this.shared!, this.task(q, opts, from, to)));
      }
      const topK = Math.max(1, opts.topK ?? 10);
      return this.answer(mergeHits(await Promise.all(slices), topK));
    } finally {
      this.inFlight--;
      this.tidy();
    }
  }
}

function norm(q: Int8Array): number {
  let n = 0;
  for (let i = 0; i < q.length; i++) n += q[i] * q[i];
  return Math.sqrt(n);
}
