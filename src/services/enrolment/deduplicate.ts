import type { GalleryService } from '../gallery/gallery-service.js';
import type { SettingsService } from '../settings/settings.js';
import type { StoredCandidate } from '../operation-log/record.js';
import { searchGallery, type MultimodalProbe } from '../biometrics/multimodal.js';

export interface DedupOutcome {
  status: 'ENROLLED' | 'PENDING_ADJUDICATION' | 'REJECTED';
  /** Gallery subjects at or above the adjudication threshold, best first. */
  candidates: StoredCandidate[];
  /** The threshold that decided a non-ENROLLED status. */
  threshold?: number;
}

/** The settings deduplication decides by, read before the enrolment's transaction (see {@link deduplicate}). */
export interface DedupRules {
  duplicate: number;
  adjudication: number;
  maxCandidates: number;
}

export async function deduplicationRules(services: { settings: SettingsService }): Promise<DedupRules> {
  const [duplicate, adjudication, maxCandidates] = await Promise.all([
    services.settings.get('deduplication.duplicateThreshold'),
    services.settings.get('deduplication.adjudicationThreshold'),
    services.settings.get('identify.maxCandidates'),
  ]);
  return { duplicate, adjudication, maxCandidates };
}

/**
 * Search a new subject's templates (its faces, and its averaged voice) in the ENROLLED gallery (same
 * template versions only) and decide on the fused score: >= deduplication.duplicateThreshold -> REJECTED;
 * >= deduplication.adjudicationThreshold -> PENDING_ADJUDICATION; otherwise ENROLLED. A candidate's face
 * score is its best over the new face templates; face and voice fuse as in identification. Reads no database
 * row of its own (the rules come in), so it can run inside the enrolment's transaction, under its lock.
 */
export async function deduplicate(
  services: { gallery: GalleryService },
  probe: MultimodalProbe,
  rules: DedupRules,
): Promise<DedupOutcome> {
  const { duplicate, adjudication, maxCandidates } = rules;
  const candidates = await searchGallery(services, probe, { topK: maxCandidates, threshold: adjudication });
  const top = candidates[0]?.score ?? 0;
  if (candidates.length && top >= duplicate) return { status: 'REJECTED', candidates, threshold: duplicate };
  if (candidates.length && top >= adjudication)
    return { status: 'PENDING_ADJUDICATION', candidates, threshold: adjudication };
  return { status: 'ENROLLED', candidates: [] };
}
