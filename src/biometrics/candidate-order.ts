// The one order of a 1:N answer, wherever its candidates were found: one gallery, the slices of matcher threads
// or the shards of a matcher cluster (src/services/gallery/sharded/). A scan breaks ties between equal scores by
// row order, and row order is an accident of each process's loads and replays; so equal scores are ordered by
// the gallery key here, a tie-break every process computes the same way.
import type { IdentifyOptions, MatchCandidate } from './matcher-types.js';

/**
 * Gallery keys in a total order that is numeric order for the service's keys (`String(subjects.id)`: digits, no
 * leading zeros): shorter first, then by code unit.
 */
export function compareKeys(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Best first: the higher score, between equal scores the higher cosine (scores are clamped, and subjects with
 * more samples score lower at one cosine: subject-score.ts), and between equal cosines the smaller gallery key.
 */
function compareCandidates(a: MatchCandidate, b: MatchCandidate): number {
  return b.score - a.score || b.cosine - a.cosine || compareKeys(a.subject, b.subject);
}

/** True when `a` and `b` are equal in everything but their key. */
const tied = (a: MatchCandidate, b: MatchCandidate) => a.score === b.score && a.cosine === b.cosine;

/**
 * The exact best `topK` in {@link compareCandidates} order, from a search that breaks ties its own way (by row).
 * The search is asked for one more than `topK`: when that one ties with the last that counts, a subject beyond it
 * may tie too, so it asks again for twice as many until the list ends below the tie. Every subject tied with the
 * K-th is then in hand, and the key decides between them. Nearly always one search.
 */
export async function exactTopK(
  search: (opts: IdentifyOptions) => Promise<MatchCandidate[]> | MatchCandidate[],
  opts: IdentifyOptions,
): Promise<MatchCandidate[]> {
  const topK = Math.max(1, opts.topK ?? 10);
  let ask = topK + 1;
  for (;;) {
    const found = await search({ ...opts, topK: ask });
    if (found.length < ask || !tied(found[ask - 1]!, found[topK - 1]!))
      return found.sort(compareCandidates).slice(0, topK);
    ask *= 2;
  }
}

/** The best `topK` of several exact lists (each the best `topK` of a disjoint part of the gallery), in order. */
export function mergeCandidates<T extends MatchCandidate>(lists: readonly T[][], topK: number): T[] {
  return lists.flat().sort(compareCandidates).slice(0, Math.max(1, topK));
}
