// One exhaustive scan of a range of gallery rows: the best `topK` subjects by their subject score (their best row,
// scored with their number of samples: subject-score.ts), exactly. The same code runs on the gallery's own
// thread (a whole search) and in each matcher thread (one slice of a search), and `mergeHits` joins slices into
// what one scan of every row would have found.
import type { Calibration } from './calibration.js';
import { CHUNK, type DotKernel } from './matcher-dots.js';
import { ALIVE, type RowMeta } from './matcher-store.js';
import { SubjectScorer, sampleScoreFor } from './subject-score.js';

/**
 * A scan's result, best first (subject score, then cosine, then row): subject numbers, their best cosine, their
 * subject score and the row the cosine came from.
 */
export interface ScanHits {
  subjects: number[];
  cosines: number[];
  scores: number[];
  rows: number[];
}

/** A slice of one search, as sent to a matcher thread. */
export interface ScanTask {
  probe: Int8Array;
  from: number;
  to: number;
  /** Rows removed after this generation still count (the search started then). */
  generation: number;
  /** Minimum subject score, 0 for none. */
  threshold: number;
  topK: number;
  /** Subject numbers to leave out, ascending. */
  excluded: Int32Array;
}

/** Below this much, a cosine first cut is taken as equal (the calibration's inverse is interpolated in floats). */
const CUT_SLACK = 1e-9;
/** Sample counts whose cut a scan keeps (a subject with more samples has its cut worked out per row). */
const CUT_SLOTS = 64;

function isExcluded(sorted: Int32Array, s: number): boolean {
  let lo = 0,
    hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] === s) return true;
    if (sorted[mid] < s) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/**
 * Scans rows task.from..task.to-1, leaving out task.excluded and the subjects `dropped` names. A row's cosine is
 * first compared with a cut in cosine below which no subject of any number of samples can enter the list (the
 * threshold's cosine for one sample, or that of the K-th subject's score); only rows above it are scored. Ties
 * keep the earlier row first, so any split of the rows merges to the order of one scan.
 */
export function scanRows(
  kernel: DotKernel,
  meta: RowMeta,
  task: ScanTask,
  calibration: Calibration,
  dropped?: (subject: number) => boolean,
): ScanHits {
  const { probe, topK, generation, excluded } = task;
  const hits: ScanHits = { subjects: [], cosines: [], scores: [], rows: [] };
  let pn = 0;
  for (let i = 0; i < probe.length; i++) pn += probe[i] * probe[i];
  pn = Math.sqrt(pn);
  const scorer = new SubjectScorer(calibration, task.threshold);
  // one sample needs the lowest cosine to reach a threshold: none reaches it when one sample cannot
  if (pn === 0 || scorer.minCosine(1) === Infinity) return hits;
  kernel.setProbe(probe);
  const { inv, ints } = meta;
  const { subjects: bestSubj, cosines: bestCos, scores: bestScore, rows: bestRow } = hits;
  const ipn = 1 / pn;
  // Per number of samples k, the cut in dot units (cosine * |probe|) below which a row of a subject of k samples
  // can enter neither the threshold nor the list: the threshold's cosine for k samples, and once the list is
  // full the cosine at which k samples reach the K-th subject score. Worked out when a row of k samples first
  // asks after the list changed, so a scan pays for the sample counts it meets.
  const cuts = new Float64Array(CUT_SLOTS).fill(Number.NaN); // NaN: not worked out since the list changed
  let kth = -1; // the K-th subject score once the list is full
  const cutFor = (k: number): number => {
    let c = scorer.minCosine(k);
    if (kth >= 0) c = Math.max(c, calibration.scoreToCosine(sampleScoreFor(kth, k)) - CUT_SLACK);
    if (k < CUT_SLOTS) cuts[k] = c * pn;
    return c * pn;
  };
  for (let start = task.from; start < task.to; start += CHUNK) {
    const n = Math.min(CHUNK, task.to - start);
    const dots = kernel.dots(start, n);
    for (let i = 0; i < n; i++) {
      const r = start + i;
      const samples = ints[6 * r + 4];
      let cut = samples < CUT_SLOTS ? cuts[samples] : Number.NaN;
      if (Number.isNaN(cut)) cut = cutFor(samples);
      // compare dot / |row| against the cut without dividing
      if (!(dots[i] * inv[3 * r] >= cut)) continue;
      const c = dots[i] * inv[3 * r] * ipn;
      if (!(c >= scorer.minCosine(samples))) continue; // the threshold, for this many samples
      const died = ints[6 * r + 3];
      if (died !== ALIVE && died <= generation) continue;
      const s = ints[6 * r + 2];
      if ((excluded.length && isExcluded(excluded, s)) || dropped?.(s)) continue;
      const score = scorer.score(c, samples);
      const at = bestSubj.indexOf(s);
      if (at >= 0) {
        if (c <= bestCos[at]) continue; // the same subject: its score grows with its best cosine
        bestSubj.splice(at, 1);
        bestCos.splice(at, 1);
        bestScore.splice(at, 1);
        bestRow.splice(at, 1);
      }
      let pos = bestCos.length;
      while (pos > 0 && (bestScore[pos - 1] < score || (bestScore[pos - 1] === score && bestCos[pos - 1] < c))) pos--;
      if (pos >= topK) continue;
      bestSubj.splice(pos, 0, s);
      bestCos.splice(pos, 0, c);
      bestScore.splice(pos, 0, score);
      bestRow.splice(pos, 0, r);
      if (bestCos.length > topK) {
        bestSubj.pop();
        bestCos.pop();
        bestScore.pop();
        bestRow.pop();
      }
      if (bestCos.length === topK && bestScore[topK - 1] !== kth) {
        kth = bestScore[topK - 1];
        cuts.fill(Number.NaN);
      }
    }
  }
  return hits;
}

/**
 * Joins slice results into the exact top-K of the whole range. A subject in the overall top K is in the top K
 * of the slice holding its best row (every subject above it there is above it overall: a subject's score grows
 * with its best cosine), so the union of the slices' lists holds the answer; a subject found in several slices
 * keeps its best cosine.
 */
export function mergeHits(parts: ScanHits[], topK: number): ScanHits {
  const best = new Map<number, { c: number; s: number; r: number }>();
  for (const p of parts) {
    for (let i = 0; i < p.subjects.length; i++) {
      const subject = p.subjects[i],
        c = p.cosines[i],
        r = p.rows[i];
      const b = best.get(subject);
      if (!b || c > b.c || (c === b.c && r < b.r)) best.set(subject, { c, s: p.scores[i], r });
    }
  }
  const all = [...best].sort((a, b) => b[1].s - a[1].s || b[1].c - a[1].c || a[1].r - b[1].r).slice(0, topK);
  return {
    subjects: all.map((x) => x[0]),
    cosines: all.map((x) => x[1].c),
    scores: all.map((x) => x[1].s),
    rows: all.map((x) => x[1].r),
  };
}
