// One exhaustive scan of a range of gallery rows: the best `topK` subjects by their best row, exactly. The same
// code runs on the gallery's own thread (a whole search) and in each matcher thread (one slice of a search),
// and `mergeHits` joins slices into what one scan of every row would have found.
import { CHUNK, type DotKernel } from './matcher-dots.js';
import { ALIVE, type RowMeta } from './matcher-store.js';

/** A scan's result, best first: subject numbers, their best cosine and the row it came from. */
export interface ScanHits {
  subjects: number[];
  cosines: number[];
  rows: number[];
}

/** A slice of one search, as sent to a matcher thread. */
export interface ScanTask {
  probe: Int8Array;
  from: number;
  to: number;
  /** Rows removed after this generation still count (the search started then). */
  generation: number;
  /** Minimum cosine, -Infinity for none. */
  minCosine: number;
  topK: number;
  /** Subject numbers to leave out, ascending. */
  excluded: Int32Array;
}

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
 * Scans rows task.from..task.to-1, leaving out task.excluded and the subjects `dropped` names. Ties keep the earlier row first, so any split of the rows merges to the
 * order of one scan.
 */
export function scanRows(
  kernel: DotKernel,
  meta: RowMeta,
  task: ScanTask,
  dropped?: (subject: number) => boolean,
): ScanHits {
  const { probe, topK, generation, excluded } = task;
  const hits: ScanHits = { subjects: [], cosines: [], rows: [] };
  let pn = 0;
  for (let i = 0; i < probe.length; i++) pn += probe[i] * probe[i];
  pn = Math.sqrt(pn);
  if (pn === 0 || task.minCosine === Infinity) return hits;
  kernel.setProbe(probe);
  const { inv, ints } = meta;
  const { subjects: bestSubj, cosines: bestCos, rows: bestRow } = hits;
  let floor = task.minCosine;
  const ipn = 1 / pn;
  for (let start = task.from; start < task.to; start += CHUNK) {
    const n = Math.min(CHUNK, task.to - start);
    const dots = kernel.dots(start, n);
    const fl = floor * pn; // compare dot / |row| against floor * |probe| without dividing
    for (let i = 0; i < n; i++) {
      const r = start + i;
      if (!(dots[i] * inv[2 * r] >= fl)) continue;
      const c = dots[i] * inv[2 * r] * ipn;
      if (!(c >= floor)) continue;
      const died = ints[4 * r + 3];
      if (died !== ALIVE && died <= generation) continue;
      const s = ints[4 * r + 2];
      if ((excluded.length && isExcluded(excluded, s)) || dropped?.(s)) continue;
      const at = bestSubj.indexOf(s);
      if (at >= 0) {
        if (c <= bestCos[at]) continue;
        bestSubj.splice(at, 1);
        bestCos.splice(at, 1);
        bestRow.splice(at, 1);
      }
      let pos = bestCos.length;
      while (pos > 0 && bestCos[pos - 1] < c) pos--;
      bestSubj.splice(pos, 0, s);
      bestCos.splice(pos, 0, c);
      bestRow.splice(pos, 0, r);
      if (bestCos.length > topK) {
        bestSubj.pop();
        bestCos.pop();
        bestRow.pop();
      }
      if (bestCos.length === topK) floor = Math.max(task.minCosine, bestCos[topK - 1]);
    }
  }
  return hits;
}

/**
 * Joins slice results into the exact top-K of the whole range. A subject in the overall top K is in the top K
 * of the slice holding its best row (every subject above it there is above it overall), so the union of the
 * slices' lists holds the answer; a subject found in several slices keeps its best cosine.
 */
export function mergeHits(parts: ScanHits[], topK: number): ScanHits {
  const best = new Map<number, { c: number; r: number }>();
  for (const p of parts) {
    for (let i = 0; i < p.subjects.length; i++) {
      const s = p.subjects[i],
        c = p.cosines[i],
        r = p.rows[i];
      const b = best.get(s);
      if (!b || c > b.c || (c === b.c && r < b.r)) best.set(s, { c, r });
    }
  }
  const all = [...best].sort((a, b) => b[1].c - a[1].c || a[1].r - b[1].r).slice(0, topK);
  return { subjects: all.map((x) => x[0]), cosines: all.map((x) => x[1].c), rows: all.map((x) => x[1].r) };
}
