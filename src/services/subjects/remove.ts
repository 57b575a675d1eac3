import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/tables.js';

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
 * parameters, whatever the number of subjects, and every lookup can use an index.
 */

type Trx = Transaction<Database> | Kysely<Database>;

/** The columns of a subject row that removal needs. */
export interface SubjectKey {
  id: number;
  subject_id: string;
  enrollment_operation_uuid: string | null;
}

/** Rows removed per table. */
export interface RemovedCounts {
  subjects: number;
  operations: number;
  images: number;
  faceSamples: number;
  voiceSamples: number;
  templates: number;
  adjudicationCases: number;
}

const CHUNK = 500;

export function emptyCounts(): RemovedCounts {
  return { subjects: 0, operations: 0, images: 0, faceSamples: 0, voiceSamples: 0, templates: 0, adjudicationCases: 0 };
}

const n = (result: { numDeletedRows: bigint }) => Number(result.numDeletedRows);

/** Remove these subjects and everything that is theirs; returns the rows removed per table. */
export async function removeSubjects(trx: Trx, subjects: readonly SubjectKey[]): Promise<RemovedCounts> {
  const counts = emptyCounts();
  for (let i = 0; i < subjects.length; i += CHUNK) {
    const chunk = subjects.slice(i, i + CHUNK);
    const got = await removeChunk(trx, chunk);
    for (const key of Object.keys(counts) as (keyof RemovedCounts)[]) counts[key] += got[key];
  }
  return counts;
}

/** The UUIDs of these subjects' operations, each branch an indexed lookup; read before their samples go. */
async function operationUuidsOf(
  trx: Trx,
  refs: number[],
  subjectIds: string[],
  enrolments: string[],
): Promise<string[]> {
  let query = trx
    .selectFrom('operations')
    .select('uuid')
    .where('subject_id', 'in', subjectIds)
    .union(trx.selectFrom('face_samples').select('operation_uuid as uuid').where('subject_ref', 'in', refs))
    .union(trx.selectFrom('voice_samples').select('operation_uuid as uuid').where('subject_ref', 'in', refs))
    .union(trx.selectFrom('images').select('operation_uuid as uuid').where('subject_ref', 'in', refs));
  if (enrolments.length)
    query = query.union(trx.selectFrom('operations').select('uuid').where('uuid', 'in', enrolments));
  return (await query.execute()).map((r) => String(r.uuid));
}

async function removeChunk(trx: Trx, chunk: readonly SubjectKey[]): Promise<RemovedCounts> {
  const refs = chunk.map((s) => s.id);
  const subjectIds = chunk.map((s) => s.subject_id);
  const enrolments = chunk.map((s) => s.enrollment_operation_uuid).filter((u): u is string => u !== null);
  const opUuids = await operationUuidsOf(trx, refs, subjectIds, enrolments);
  const opSlices: string[][] = [];
  for (let i = 0; i < opUuids.length; i += 1000) opSlices.push(opUuids.slice(i, i + 1000));

  // Samples of these subjects' operations that no subject owns (a verification probe's image, say).
  const orphans = async (table: 'face_samples' | 'voice_samples' | 'images') => {
    let removed = 0;
    for (const slice of opSlices) {
      removed += n(
        await trx
          .deleteFrom(table as 'images')
          .where('subject_ref', 'is', null)
          .where('operation_uuid', 'in', slice)
          .executeTakeFirstOrThrow(),
      );
    }
    return removed;
  };
  const ownedBy = async (table: 'templates' | 'face_samples' | 'voice_samples' | 'images') =>
    n(
      await trx
        .deleteFrom(table as 'templates')
        .where('subject_ref', 'in', refs)
        .executeTakeFirstOrThrow(),
    );

  const adjudicationCases = n(
    await trx
      .deleteFrom('adjudication_cases')
      .where('status', 'in', ['PENDING', 'CONFLICTED'])
      .where('subject_id', 'in', subjectIds)
      .executeTakeFirstOrThrow(),
  );
  let operations = 0;
  for (const slice of opSlices)
    operations += n(await trx.deleteFrom('operations').where('uuid', 'in', slice).executeTakeFirstOrThrow());
  const templates = await ownedBy('templates');
  const faceSamples = (await orphans('face_samples')) + (await ownedBy('face_samples'));
  const voiceSamples = (await orphans('voice_samples')) + (await ownedBy('voice_samples'));
  const images = (await orphans('images')) + (await ownedBy('images'));
  const subjects = n(await trx.deleteFrom('subjects').where('id', 'in', refs).executeTakeFirstOrThrow());
  return { subjects, operations, images, faceSamples, voiceSamples, templates, adjudicationCases };
}
