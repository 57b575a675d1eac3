import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { notFound } from '../errors.js';
import { ownsSubject, type Owner } from '../ownership.js';
import type { SubjectRow } from './present.js';

/**
 * Finding one subject by each of the names clients use for it: the internal id, the client's subjectId, or
 * the UUID of an operation that concerned it. Each throws a 404 problem when nothing matches.
 */

type Db = Kysely<Database>;

/** How a client names one subject. */
export type SubjectRef = { id: number } | { subjectId: string } | { operationUuid: string };

/** Subject ids (subjects.id) an operation UUID concerns: its enrolment, its samples, or the operation row's subjectId. */
export function subjectRefsOfOperation(db: Db, uuids: readonly string[]) {
  const list = [...uuids];
  return db
    .selectFrom('subjects as s')
    .select(['s.id', 's.subject_id', 's.enrollment_operation_uuid'])
    .where((eb) =>
      eb.or([
        eb('s.enrollment_operation_uuid', 'in', list),
        eb('s.id', 'in', eb.selectFrom('face_samples').select('subject_ref').where('operation_uuid', 'in', list)),
        eb('s.id', 'in', eb.selectFrom('voice_samples').select('subject_ref').where('operation_uuid', 'in', list)),
        eb('s.id', 'in', eb.selectFrom('images').select('subject_ref').where('operation_uuid', 'in', list)),
        eb('s.subject_id', 'in', eb.selectFrom('operations').select('subject_id').where('uuid', 'in', list)),
      ]),
    );
}

/** Which of these operation UUIDs concern a subject (by the same rules as {@link subjectRefsOfOperation}), in one query. */
export async function operationUuidsWithSubject(db: Db, uuids: readonly string[]): Promise<Set<string>> {
  const list = [...uuids];
  const rows = await db
    .selectFrom('subjects')
    .select('enrollment_operation_uuid as uuid')
    .where('enrollment_operation_uuid', 'in', list)
    .union(
      db
        .selectFrom('face_samples')
        .select('operation_uuid as uuid')
        .where('subject_ref', 'is not', null)
        .where('operation_uuid', 'in', list),
    )
    .union(
      db
        .selectFrom('voice_samples')
        .select('operation_uuid as uuid')
        .where('subject_ref', 'is not', null)
        .where('operation_uuid', 'in', list),
    )
    .union(
      db
        .selectFrom('images')
        .select('operation_uuid as uuid')
        .where('subject_ref', 'is not', null)
        .where('operation_uuid', 'in', list),
    )
    .union(
      db
        .selectFrom('operations as o')
        .innerJoin('subjects as s', 's.subject_id', 'o.subject_id')
        .select('o.uuid as uuid')
        .where('o.uuid', 'in', list),
    )
    .execute();
  return new Set(rows.map((r) => String(r.uuid)));
}

/**
 * The subject row a client names, or a 404 naming what was asked for. With an `owner` (the user surface), a
 * subject the owner's account did not enrol is not found either (services/ownership.ts).
 */
export async function findSubject(db: Db, ref: SubjectRef, owner: Owner = null): Promise<SubjectRow> {
  const subjects = () => {
    const query = db.selectFrom('subjects').selectAll();
    return owner ? query.where(ownsSubject('subjects.enrollment_operation_uuid', owner)) : query;
  };
  let row: SubjectRow | undefined;
  if ('id' in ref) {
    row = await subjects().where('id', '=', ref.id).executeTakeFirst();
    if (!row) throw notFound(`Subject ${ref.id}`);
  } else if ('subjectId' in ref) {
    row = await subjects().where('subject_id', '=', ref.subjectId).executeTakeFirst();
    if (!row) throw notFound(`Subject '${ref.subjectId}'`);
  } else {
    const matches = subjectRefsOfOperation(db, [ref.operationUuid]).clearSelect().select('s.id');
    row = await subjects().where('id', 'in', matches).orderBy('id').executeTakeFirst();
    if (!row) throw notFound(`A subject of operation ${ref.operationUuid}`);
  }
  return row;
}
