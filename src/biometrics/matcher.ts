import { BiometricError } from './errors.js';
import { FACE_CALIBRATION, calibrationOf, type Calibration } from './calibration.js';
import { DOT_I8_WASM_BASE64 } from './matcher-kernel.js';
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

// ---- dot-product kernels -----------------------------------------------------------------------------

const PROBE_OFF = 0; // int16 probe, up to 32 KiB
const OUT_OFF = 32768; // int32 scores, CHUNK rows
const CHUNK = 16384;
const ROWS_OFF = OUT_OFF + CHUNK * 4; // gallery rows start here (16-byte aligned)

interface Kernel {
  readonly simd: boolean;
  /** Makes room for `bytes` of rows; returns the row store (its view changes when memory grows). */
  reserve(bytes: number): Int8Array;
  rows(): Int8Array;
  /** out[i] = dot(probe, row[start + i]) for i < n. */
  dots(probe: Int8Array, start: number, n: number, dims: number): Int32Array;
}

let simdModule: WebAssembly.Module | null | undefined;
function getSimdModule(): WebAssembly.Module | null {
  if (simdModule !== undefined) return simdModule;
  try {
    const bin = Uint8Array.from(atob(DOT_I8_WASM_BASE64), (c) => c.charCodeAt(0));
    // Cloudflare Workers forbid compiling wasm from bytes at run time: the JS kernel is the fallback there.
    simdModule = WebAssembly.validate(bin) ? new WebAssembly.Module(bin) : null;
  } catch {
    simdModule = null;
  }
  return simdModule;
}

class SimdKernel implements Kernel {
  readonly simd = true;
  private readonly mem: WebAssembly.Memory;
  private readonly fn: (probe: number, rows: number, n: number, dims: number, out: number) => void;
  private view: Int8Array;
  constructor(mod: WebAssembly.Module) {
    const inst = new WebAssembly.Instance(mod, {});
    this.mem = inst.exports.mem as WebAssembly.Memory;
    this.fn = inst.exports.dots as SimdKernel['fn'];
    this.view = new Int8Array(this.mem.buffer, ROWS_OFF);
  }
  reserve(bytes: number): Int8Array {
    const need = ROWS_OFF + bytes;
    if (need > this.mem.buffer.byteLength) {
      const pages = Math.ceil((need - this.mem.buffer.byteLength) / 65536);
      // Grow by at least half again, to amortise copies.
      const grow = Math.max(pages, Math.ceil(this.mem.buffer.byteLength / 65536 / 2));
      try {
        this.mem.grow(grow);
      } catch {
        this.mem.grow(pages);
      }
      this.view = new Int8Array(this.mem.buffer, ROWS_OFF);
    }
    return this.view;
  }
  rows(): Int8Array {
    return this.view;
  }
  dots(probe: Int8Array, start: number, n: number, dims: number): Int32Array {
    new Int16Array(this.mem.buffer, PROBE_OFF, dims).set(probe);
    this.fn(PROBE_OFF, ROWS_OFF + start * dims, n, dims, OUT_OFF);
    return new Int32Array(this.mem.buffer, OUT_OFF, n);
  }
}

class JsKernel implements Kernel {
  readonly simd = false;
  private buf = new Int8Array(1 << 16);
  private readonly out = new Int32Array(CHUNK);
  reserve(bytes: number): Int8Array {
    if (bytes > this.buf.length) {
      const next = new Int8Array(Math.max(bytes, this.buf.length * 2));
      next.set(this.buf);
      this.buf = next;
    }
    return this.buf;
  }
  rows(): Int8Array {
    return this.buf;
  }
  dots(probe: Int8Array, start: number, n: number, dims: number): Int32Array {
    const g = this.buf;
    for (let i = 0; i < n; i++) {
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      const o = (start + i) * dims;
      for (let k = 0; k < dims; k += 4) {
        s0 += probe[k] * g[o + k]; s1 += probe[k + 1] * g[o + k + 1];
        s2 += probe[k + 2] * g[o + k + 2]; s3 += probe[k + 3] * g[o + k + 3];
      }
      this.out[i] = s0 + s1 + s2 + s3;
    }
    return this.out.subarray(0, n);
  }
}

// ---- one partition --------------------------------------------------------------------------------

/**
 * An exact 1:1 / 1:N matcher over int8 templates of ONE template version. Each subject may hold several
 * templates; a search scores a subject by its best template. Rows live in one contiguous int8 store (in
 * WebAssembly memory when SIMD is available) and are compared exhaustively: no approximation.
 *
 * @example
 * const g = new FaceGallery(ex.templateVersion);
 * g.replace('subject-1', [templateBytes]);
 * g.identify(probeBytes, { topK: 5, threshold: 48 }); // [{ subject, score, cosine }]
 */
export class FaceGallery {
  private readonly kernel: Kernel;
  private readonly rowSubject: string[] = [];
  private readonly rowNorm: number[] = [];
  private rowInv = new Float64Array(1024);
  private readonly subjectRows = new Map<string, number[]>();
  private count = 0;

  /**
   * @param templateVersion only templates of this version are accepted.
   * @param dims embedding length (a multiple of 16 for the SIMD kernel; 512 for faces).
   * @param options.kernel 'auto' (SIMD if available) or 'js'.
   */
  constructor(
    readonly templateVersion: string,
    readonly dims = 512,
    options: { kernel?: 'auto' | 'js'; calibration?: Calibration } = {},
  ) {
    const mod = options.kernel === 'js' || dims % 16 !== 0 ? null : getSimdModule();
    this.kernel = mod ? new SimdKernel(mod) : new JsKernel();
    this.calibration = options.calibration ?? FACE_CALIBRATION;
  }

  private readonly calibration: Calibration;

  /** True when the WebAssembly SIMD kernel is in use. */
  get simd(): boolean {
    return this.kernel.simd;
  }

  /** Number of templates. */
  get size(): number {
    return this.count;
  }

  /** Number of subjects. */
  get subjects(): number {
    return this.subjectRows.size;
  }

  has(subject: string): boolean {
    return this.subjectRows.has(subject);
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
    const store = this.kernel.reserve((this.count + 1) * this.dims);
    store.set(q, this.count * this.dims);
    let n = 0;
    for (let i = 0; i < q.length; i++) n += q[i] * q[i];
    this.rowSubject.push(subject);
    this.rowNorm.push(Math.sqrt(n));
    if (this.count >= this.rowInv.length) { const next = new Float64Array(this.rowInv.length * 2); next.set(this.rowInv); this.rowInv = next; }
    this.rowInv[this.count] = n ? 1 / Math.sqrt(n) : 0;
    const rows = this.subjectRows.get(subject);
    if (rows) rows.push(this.count);
    else this.subjectRows.set(subject, [this.count]);
    this.count++;
  }

  /** Replaces every template of `subject` (an empty list removes it). */
  replace(subject: string, templates: Probe[]): void {
    const qs = templates.map((t) => this.toInt8(t)); // validate all before changing anything
    this.remove(subject);
    for (const q of qs) this.add(subject, q);
  }

  /** Removes `subject` and its templates; returns false if it was absent. */
  remove(subject: string): boolean {
    const rows = this.subjectRows.get(subject);
    if (!rows) return false;
    this.subjectRows.delete(subject);
    // Delete from the highest row down, moving the last row into each hole.
    for (const r of [...rows].sort((a, b) => b - a)) {
      const last = this.count - 1;
      if (r !== last) {
        const store = this.kernel.rows();
        store.copyWithin(r * this.dims, last * this.dims, (last + 1) * this.dims);
        const moved = this.rowSubject[last];
        this.rowSubject[r] = moved;
        this.rowNorm[r] = this.rowNorm[last];
        this.rowInv[r] = this.rowInv[last];
        const mrows = this.subjectRows.get(moved)!;
        mrows[mrows.indexOf(last)] = r;
      }
      this.rowSubject.pop();
      this.rowNorm.pop();
      this.count--;
    }
    return true;
  }

  /** Removes everything. */
  clear(): void {
    this.rowSubject.length = 0;
    this.rowNorm.length = 0;
    this.subjectRows.clear();
    this.count = 0;
  }

  /** 1:1: the probe against `subject`'s best template; null when the subject is not in the gallery. */
  verify(probe: Probe, subject: string): MatchCandidate | null {
    const rows = this.subjectRows.get(subject);
    if (!rows) return null;
    const q = this.toInt8(probe);
    const pn = norm(q);
    const store = this.kernel.rows();
    let best = -1;
    for (const r of rows) {
      let d = 0;
      const o = r * this.dims;
      for (let k = 0; k < this.dims; k++) d += q[k] * store[o + k];
      best = Math.max(best, pn && this.rowNorm[r] ? d / (pn * this.rowNorm[r]) : 0);
    }
    return { subject, cosine: best, score: this.calibration.cosineToScore(best) };
  }

  /**
   * 1:N exhaustive search: the `topK` subjects with the highest scores at or above `threshold`, best first.
   */
  identify(probe: Probe, opts: IdentifyOptions = {}): MatchCandidate[] {
    const q = this.toInt8(probe);
    const topK = Math.max(1, opts.topK ?? 10);
    const minCos = opts.threshold ? this.calibration.scoreToCosine(opts.threshold) : -Infinity;
    if (minCos === Infinity) return [];
    const ex = opts.exclude;
    const excluded = !ex ? () => false : typeof ex === 'function' ? ex : (s: string) => ex.has(s);
    const pn = norm(q);
    if (pn === 0) return [];
    // Top-k by subject: small sorted arrays (k is small), updated only when a row beats the current floor.
    const bestSubj: string[] = [];
    const bestCos: number[] = [];
    let floor = minCos;
    const inv = this.rowInv;
    const ipn = 1 / pn;
    for (let start = 0; start < this.count; start += CHUNK) {
      const n = Math.min(CHUNK, this.count - start);
      const dots = this.kernel.dots(q, start, n, this.dims);
      const fl = floor * pn; // compare dot * invNorm(row) against floor * |probe| without dividing
      for (let i = 0; i < n; i++) {
        if (!(dots[i] * inv[start + i] >= fl)) continue;
        const r = start + i;
        const c = dots[i] * inv[r] * ipn;
        if (!(c >= floor)) continue;
        const s = this.rowSubject[r];
        if (excluded(s)) continue;
        const at = bestSubj.indexOf(s);
        if (at >= 0) {
          if (c <= bestCos[at]) continue;
          bestSubj.splice(at, 1);
          bestCos.splice(at, 1);
        }
        let pos = bestCos.length;
        while (pos > 0 && bestCos[pos - 1] < c) pos--;
        bestSubj.splice(pos, 0, s);
        bestCos.splice(pos, 0, c);
        if (bestCos.length > topK) { bestSubj.pop(); bestCos.pop(); }
        if (bestCos.length === topK) floor = Math.max(minCos, bestCos[topK - 1]);
      }
    }
    return bestSubj.map((subject, i) => ({ subject, cosine: bestCos[i], score: this.calibration.cosineToScore(bestCos[i]) }));
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
  constructor(private readonly options: { dims?: number; kernel?: 'auto' | 'js' } = {}) {}

  /**
   * The partition of one template version (created on demand). A template version belongs to one model,
   * so one modality: voice partitions hold 256-d rows scored with the voice calibration.
   */
  partition(templateVersion: string, record?: TemplateRecord): FaceGallery {
    let p = this.parts.get(templateVersion);
    if (!p) {
      const modality = record?.modality ?? 'face';
      const dims = record?.q.length ?? this.options.dims ?? 512;
      p = new FaceGallery(templateVersion, dims, { kernel: this.options.kernel, calibration: calibrationOf(modality) });
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

  /** 1:1 of template bytes against a subject in the partition of their version. */
  verify(probeBytes: Uint8Array, subject: string): MatchCandidate | null {
    const t = parseTemplate(probeBytes);
    const p = this.parts.get(t.templateVersion);
    const r = recordOf(t);
    return p && r ? p.verify(r, subject) : null;
  }
}
