import type { Queryable } from '../queryable.js';

/**
 * The statements of a subject delete (services/subjects/remove.ts says what a delete removes and cuts the
 * subjects into chunks): for one chunk of subjects, inside the caller's transaction, the rows removed per table.
 * Operation UUIDs go in slices of 1000 so no statement carries more than a few thousand parameters, and every
 * lookup can use an index.
 */

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

const n = (result: { numDeletedRows: bigint }) => Number(result.numDeletedRows);

/** The UUIDs of these subjects' operations, each branch an indexed lookup; read before their samples go. */
async function operationUuidsOf(
  trx: Queryable,
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

/** Delete one chunk of subjects with their operations, open cases, templates, samples and images. */
export async function deleteSubjectsChunk(trx: Queryable, chunk: readonly SubjectKey[]): Promise<RemovedCounts> {
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

  // Open cases only (with their decisions, by FK cascade): solved cases stay as the audit of what was decided.
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
