import type { Queryable } from '../../db/repositories/queryable.js';
import { deleteSubjectsChunk, type RemovedCounts, type SubjectKey } from '../../db/repositories/subjects/remove.js';

/**
 * What deleting a subject removes, in one place: "a subject with its operations and biometric data"
 * (domain.md). For each subject, inside the caller's transaction:
 * - its operations: the rows naming its subjectId, its enrolment operation, and every operation that stored
 *   one of its samples or images;
 * - samples and images of those operations that belong to no subject (e.g. a verification probe's image);
 * - its adjudication cases that are still open (PENDING or CONFLICTED) with it as the probe, with their
 *   decisions (FK cascade); solved cases stay as the audit of what was decided;
 * - its templates, face and voice samples and images (deleted explicitly rather than left to the FK cascades,
 *   so that the counts per table are exact), then the subject row.
 * Work goes in chunks of subjects (and of operation UUIDs) so no statement carries more than a few thousand
 * parameters, whatever the number of subjects, and every lookup can use an index. The statements are
 * db/repositories/subjects/remove.ts.
 */

type Trx = Queryable;

const CHUNK = 500;

function emptyCounts(): RemovedCounts {
  return { subjects: 0, operations: 0, images: 0, faceSamples: 0, voiceSamples: 0, templates: 0, adjudicationCases: 0 };
}

/** Remove these subjects and everything that is theirs; returns the rows removed per table. */
export async function removeSubjects(trx: Trx, subjects: readonly SubjectKey[]): Promise<RemovedCounts> {
  const counts = emptyCounts();
  for (let i = 0; i < subjects.length; i += CHUNK) {
    const chunk = subjects.slice(i, i + CHUNK);
    const got = await deleteSubjectsChunk(trx, chunk);
    for (const key of Object.keys(counts) as (keyof RemovedCounts)[]) counts[key] += got[key];
  }
  return counts;
}
