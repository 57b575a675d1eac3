import type { Services } from '../index.js';
import type { StoredCandidate } from '../operations/record.js';

export interface DedupOutcome {
  status: 'ENROLLED' | 'PENDING_ADJUDICATION' | 'REJECTED';
  /** Gallery subjects at or above the adjudication threshold, best first. */
  candidates: StoredCandidate[];
  /** The threshold that decided a non-ENROLLED status. */
  threshold?: number;
}

/**
 * Search every template of a new subject in the ENROLLED gallery (same template version only) and decide:
 * best score >= deduplication.duplicateThreshold -> REJECTED; >= deduplication.adjudicationThreshold ->
 * PENDING_ADJUDICATION; otherwise ENROLLED. A candidate's score is its best over the new templates.
 */
export async function deduplicate(services: Services, templates: Uint8Array[]): Promise<DedupOutcome> {
  const [duplicate, adjudication, maxCandidates] = await Promise.all([
    services.settings.get('deduplication.duplicateThreshold'),
    services.settings.get('deduplication.adjudicationThreshold'),
    services.settings.get('identify.maxCandidates'),
  ]);
  const best = new Map<string, number>();
  for (const template of templates) {
    for (const match of await services.gallery.identify(template, { topK: maxCandidates, threshold: adjudication })) {
      best.set(match.subjectId, Math.max(best.get(match.subjectId) ?? 0, match.score));
    }
  }
  const candidates = [...best.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, maxCandidates)
    .map(([subjectId, score], i) => ({ subjectId, score: round(score), scores: { FACE: round(score) }, rank: i + 1 }));
  const top = candidates[0]?.score ?? 0;
  if (candidates.length && top >= duplicate) return { status: 'REJECTED', candidates, threshold: duplicate };
  if (candidates.length && top >= adjudication) return { status: 'PENDING_ADJUDICATION', candidates, threshold: adjudication };
  return { status: 'ENROLLED', candidates: [] };
}

function round(score: number): number {
  return Math.round(score * 100) / 100;
}
