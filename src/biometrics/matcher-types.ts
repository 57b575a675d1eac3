// The matcher's vocabulary, shared by the one-version gallery (face-gallery.ts), the service's gallery of
// every version (gallery.ts) and the Node matcher threads (node-matcher-pool.ts).
import type { CalibrationTable } from './calibration.js';
import type { KernelChoice } from './matcher-dots.js';
import type { ScanHits, ScanTask } from './matcher-scan.js';
import type { SharedRows } from './matcher-store.js';
import type { Template, TemplateRecord } from './template.js';

/** One candidate of a search. */
export interface MatchCandidate {
  /** The gallery key (e.g. subject id). */
  subject: string;
  /** Score on the -12*log10(FAR) scale, 0..200, of the subject: its best template and how many it has. */
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

/**
 * Matcher threads that scan slices of a shared partition (node-matcher-pool.ts on Node). Runtime-neutral: the
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
  /** The partition's calibration (a thread scores subjects as the gallery does). */
  calibration: CalibrationTable;
}

/**
 * The record a gallery stores for a template: gallery templates are single-modality (one per face or voice
 * sample), so it is the first record; its modality decides the partition's dimensions and calibration.
 */
export function recordOf(t: Template): TemplateRecord | undefined {
  return t.records[0];
}
