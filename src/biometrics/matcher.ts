import { BiometricError } from './errors.js';
import { FACE_CALIBRATION, calibrationOf, type Calibration } from './calibration.js';
import { DotKernel, kernelModules, type KernelChoice, type KernelName } from './matcher-dots.js';
import { mergeHits, scanRows, type ScanHits, type ScanTask } from './matcher-scan.js';
import { RowStore, type SharedRows } from './matcher-store.js';
import { parseTemplate, type Template, type TemplateRecord } from './template.js';

/**
 * The record a gallery stores for a template: gallery templates are single-modality (one per face or voice
 * sample), so it is the first record; its modality decides the partition's dimensions and calibration.
 */
function recordOf(t: Template): TemplateRecord | undefined {
  return t.records[0];
}

/** One candidate of a search. */
export interface MatchCandidate {
  /** The gallery key (e.g. subject id). */
  subject: string;
  /** Score on the -12*log10(FAR) scale, 0..200. */
  score: number;
  /** Cosine similarity of the best template of this subject. */
  cosine: number;
}

/** Options of `identify`. */
export interface IdentifyOptions {
  /** Maximum candidates (default 10). */
  topK?: number;
  /** Minimum score (default 0 = every subject may be returned). */
  threshold?: number;
  /** Subjects to leave out (e.g. the probe's own subject during deduplication). */
  exclude?: ReadonlySet<string> | ((subject: string) => boolean);
}

/** Probe accepted by the matcher: template bytes, a parsed face record, or raw int8 components. */
export type Probe = Uint8Array | TemplateRecord | Int8Array;

// ---- one partition --------------------------------------------------------------------------------

/**
 * Matcher threads that scan slices of a shared partition (matcher-pool.ts on Node). Runtime-neutral: the
 * gallery only posts tasks and merges what comes back.
 */
export interface MatcherThreads {
  /** Number of threads; a search is split into this many slices. */
  readonly size: number;
  /** Partitions with fewer rows are searched on the caller's thread (posting the slices would cost more). */
  readonly minRows?: number;
  /** Scans one slice of a partition on thread `thread` (0 <= thread < size), which uses scratch slot thread + 1. */
  scan(thread: number, partition: SharedPartition, task: ScanTask): Promise<ScanHits>;
}

/** A partition as matcher threads see it: its shared memories, once per thread, named by `key`. */
export interface SharedPartition extends SharedRows {
  key: number;
  kernel: KernelChoice;
}

let partitionKeys = 0;

/** Options of a partition. */
export interface FaceGalleryOptions {
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
 * templates; a search scores a subject by its best template. Rows live in one contiguous int8 store (a
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
    if (this.threads && this.store.shared) this.shared = { ...this.store.sharedRows(), key: ++partitionKeys, kernel: choice };
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
        throw new BiometricError('TEMPLATE_VERSION_MISMATCH', `template version ${t.templateVersion} does not match gallery ${this.templateVersion}`);
      }
      const r = recordOf(t);
      if (!r) throw new BiometricError('INVALID_TEMPLATE', 'template has no record');
      q = r.q;
    } else q = p.q;
    if (q.length !== this.dims) throw new BiometricError('INVALID_TEMPLATE', `embedding has ${q.length} components, gallery expects ${this.dims}`);
    return q;
  }

  /** Adds one more template for `subject`. */
  add(subject: string, template: Probe): void {
    const q = this.toInt8(template);
    let s = this.subjectNumber.get(subject);
    if (s === undefined) {
      s = this.nextSubject++;
      this.subjectNumber.set(subject, s);
      this.subjectName.set(s, subject);
      this.subjectRows.set(s, []);
    }
    this.subjectRows.get(s)!.push(this.store.append(q, s));
    this.liveRows++;
  }

  /** Replaces every template of `subject` (an empty list removes it). */
  replace(subject: string, templates: Probe[]): void {
    const qs = templates.map((t) => this.toInt8(t)); // validate all before changing anything
    this.remove(subject);
    for (const q of qs) this.add(subject, q);
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

  /** 1:1: the probe against `subject`'s best template; null when the subject is not in the gallery. */
  verify(probe: Probe, subject: string): MatchCandidate | null {
    const s = this.subjectNumber.get(subject);
    if (s === undefined) return null;
    const q = this.toInt8(probe);
    const pn = norm(q);
    const store = this.store.rows();
    const { inv } = this.store.meta();
    let best = -1;
    for (const r of this.subjectRows.get(s)!) {
      let d = 0;
      const o = r * this.dims;
      for (let k = 0; k < this.dims; k++) d += q[k] * store[o + k];
      best = Math.max(best, pn && inv[2 * r] ? (d * inv[2 * r]) / pn : 0);
    }
    return { subject, cosine: best, score: this.calibration.cosineToScore(best) };
  }

  private task(q: Int8Array, opts: IdentifyOptions, from: number, to: number): ScanTask {
    const minCosine = opts.threshold ? this.calibration.scoreToCosine(opts.threshold) : -Infinity;
    const ex = opts.exclude;
    const excluded: number[] = [];
    if (ex && typeof ex !== 'function') for (const subject of ex) { const s = this.subjectNumber.get(subject); if (s !== undefined) excluded.push(s); }
    return { probe: q, from, to, generation: this.store.generation, minCosine, topK: Math.max(1, opts.topK ?? 10), excluded: Int32Array.from(excluded).sort() };
  }

  private answer(hits: ScanHits): MatchCandidate[] {
    return hits.subjects.map((s, i) => ({ subject: this.subjectName.get(s)!, cosine: hits.cosines[i], score: this.calibration.cosineToScore(hits.cosines[i]) }));
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
    return this.answer(scanRows(this.dotKernel, this.store.meta(), task, dropped));
  }

  /**
   * 1:N exhaustive search split across the matcher threads (the same answer as `identify`, merged exactly);
   * on this thread when there are none or `exclude` is a function.
   */
  async identifyAsync(probe: Probe, opts: IdentifyOptions = {}): Promise<MatchCandidate[]> {
    const threads = this.threads;
    const count = this.store.count;
    if (!threads || typeof opts.exclude === 'function' || count < (threads.minRows ?? 0)) return this.identify(probe, opts);
    const q = this.toInt8(probe);
    const parts = threads.size;
    // slices of whole groups of four rows (the kernel's pass), as even as that allows
    const step = Math.ceil(count / parts / 4) * 4;
    this.inFlight++;
    try {
      const slices: Promise<ScanHits>[] = [];
      for (let t = 0; t < parts; t++) {
        const from = Math.min(count, t * step), to = Math.min(count, (t + 1) * step);
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

// ---- partitions -----------------------------------------------------------------------------------

/**
 * The in-memory gallery of the service, partitioned by template version: templates of different model
 * versions are never compared. Keep it in step with the database (add on enrolment, remove on delete).
 */
export class Gallery {
  private readonly parts = new Map<string, FaceGallery>();
  constructor(private readonly options: { dims?: number; kernel?: KernelChoice; threads?: MatcherThreads } = {}) {}

  /**
   * The partition of one template version (created on demand). A template version belongs to one model,
   * so one modality: voice partitions hold 256-d rows scored with the voice calibration.
   */
  partition(templateVersion: string, record?: TemplateRecord): FaceGallery {
    let p = this.parts.get(templateVersion);
    if (!p) {
      const modality = record?.modality ?? 'face';
      const dims = record?.q.length ?? this.options.dims ?? 512;
      p = new FaceGallery(templateVersion, dims, { kernel: this.options.kernel, threads: this.options.threads, calibration: calibrationOf(modality) });
      this.parts.set(templateVersion, p);
    }
    return p;
  }

  /** Template versions present. */
  versions(): string[] {
    return [...this.parts.keys()];
  }

  /** Adds template bytes for a subject, into the partition of the template's version. */
  add(subject: string, templateBytes: Uint8Array): void {
    const t = parseTemplate(templateBytes);
    const r = recordOf(t);
    if (!r) throw new BiometricError('INVALID_TEMPLATE', 'template has no record');
    this.partition(t.templateVersion, r).add(subject, r);
  }

  /** Replaces a subject's templates (all of them, across versions) by these template bytes. */
  replace(subject: string, templates: Uint8Array[]): void {
    const parsed = templates.map((b) => parseTemplate(b));
    this.remove(subject);
    for (const t of parsed) {
      const r = recordOf(t);
      if (r) this.partition(t.templateVersion, r).add(subject, r);
    }
  }

  /** Removes a subject from every partition. */
  remove(subject: string): boolean {
    let found = false;
    for (const p of this.parts.values()) found = p.remove(subject) || found;
    return found;
  }

  /** 1:N search of template bytes in the partition of their version. */
  identify(probeBytes: Uint8Array, opts?: IdentifyOptions): MatchCandidate[] {
    const t = parseTemplate(probeBytes);
    const p = this.parts.get(t.templateVersion);
    const r = recordOf(t);
    return p && r ? p.identify(r, opts) : [];
  }

  /** 1:N search of template bytes split across the matcher threads (on this thread when there are none). */
  async identifyAsync(probeBytes: Uint8Array, opts?: IdentifyOptions): Promise<MatchCandidate[]> {
    const t = parseTemplate(probeBytes);
    const p = this.parts.get(t.templateVersion);
    const r = recordOf(t);
    return p && r ? p.identifyAsync(r, opts) : [];
  }

  /** 1:1 of template bytes against a subject in the partition of their version. */
  verify(probeBytes: Uint8Array, subject: string): MatchCandidate | null {
    const t = parseTemplate(probeBytes);
    const p = this.parts.get(t.templateVersion);
    const r = recordOf(t);
    return p && r ? p.verify(r, subject) : null;
  }
}
