import { sql, type Expression, type SqlBool } from 'kysely';
import type { Queryable } from '../queryable.js';
import type { SubjectRow, SubjectsSelect } from './with-samples.js';

/**
 * Finding subjects by each of the names clients use for them: the internal id, the client's subjectId, or the
 * UUID of an operation that concerned them; and locking them for a delete. Answers what exists; the services
 * decide what a missing one means (a 404 naming it). An optional `condition` narrows the subjects to those it
 * accepts, given the column of their enrolment operation (services/ownership.ts `ownsSubject`).
 */

/** How a client names one subject. */
export type SubjectRef = { id: number } | { subjectId: string } | { operationUuid: string };

/** The column a subject's {@link SubjectCondition} judges, as the query names it. */
type EnrolmentColumn = 'subjects.enrollment_operation_uuid' | 's.enrollment_operation_uuid';
export type SubjectCondition = (enrolmentColumn: EnrolmentColumn) => Expression<SqlBool>;

/** Subject ids (subjects.id) an operation UUID concerns: its enrolment, its samples, or the operation row's subjectId. */
function subjectRefsOfOperation(db: Queryable, uuids: readonly string[]) {
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
export async function operationUuidsWithSubject(db: Queryable, uuids: readonly string[]): Promise<Set<string>> {
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

/** The subject row a client names (the lowest id of an operation's subjects), if any meets `condition`. */
export async function findSubjectRow(
  db: Queryable,
  ref: SubjectRef,
  condition?: SubjectCondition,
): Promise<SubjectRow | undefined> {
  let query = db.selectFrom('subjects').selectAll();
  if (condition) query = query.where(condition('subjects.enrollment_operation_uuid'));
  if ('id' in ref) return query.where('id', '=', ref.id).executeTakeFirst();
  if ('subjectId' in ref) return query.where('subject_id', '=', ref.subjectId).executeTakeFirst();
  const matches = subjectRefsOfOperation(db, [ref.operationUuid]).clearSelect().select('s.id');
  return query.where('id', 'in', matches).orderBy('id').executeTakeFirst();
}

/**
 * `subjects as s` narrowed to the subject an operation (UUID `operationUuid`, a value or a slot of
 * subjects/shapes.ts) is about, for the subject reads' one statement (with-samples.ts).
 */
export function subjectOfOperationSelect(
  db: Queryable,
  operationUuid: unknown,
  condition?: SubjectCondition,
): SubjectsSelect {
  let query = db.selectFrom('subjects as s');
  if (condition) query = query.where(condition('s.enrollment_operation_uuid'));
  return query
    .where(
      's.id',
      'in',
      subjectRefsOfOperation(db, [operationUuid as string])
        .clearSelect()
        .select('s.id'),
    )
    .orderBy('s.id')
    .limit(1);
}

/**
 * `subjects as s` narrowed to the subjects named by id or subjectId in `names` (a slot bound to a PostgreSQL array
 * literal, with-samples.ts `namesArray`), in id order: the statement that reads of single subjects arriving
 * together share (db/joined-reads.ts). Each read keeps the row of its own name.
 */
export function subjectsNamedSelect(
  db: Queryable,
  by: 'id' | 'subjectId',
  names: unknown,
  condition?: SubjectCondition,
): SubjectsSelect {
  let query = db.selectFrom('subjects as s');
  if (condition) query = query.where(condition('s.enrollment_operation_uuid'));
  query =
    by === 'id'
      ? query.where(sql<boolean>`s.id = any(cast(${names} as bigint[]))`)
      : query.where(sql<boolean>`s.subject_id = any(cast(${names} as text[]))`);
  return query.orderBy('s.id');
}

/** The columns of a subject row that its removal needs (subjects/remove.ts). */
const keyColumns = ['id', 'subject_id', 'enrollment_operation_uuid'] as const;

/** Lock the subject named by internal id or subjectId (FOR UPDATE) and answer its key columns, if it exists. */
export async function lockSubjectKey(db: Queryable, ref: { subjectId?: string; id?: number }) {
  let query = db.selectFrom('subjects').select(keyColumns);
  query = ref.id !== undefined ? query.where('id', '=', ref.id) : query.where('subject_id', '=', ref.subjectId!);
  return query.forUpdate().executeTakeFirst();
}

/** Lock the subjects with these subjectIds, in id order, and answer their key columns. */
export function lockSubjectKeysBySubjectIds(db: Queryable, subjectIds: readonly string[]) {
  return db
    .selectFrom('subjects')
    .select(keyColumns)
    .where('subject_id', 'in', [...subjectIds])
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Lock the subjects these operations concern ({@link subjectRefsOfOperation}), in id order. */
export function lockSubjectKeysOfOperations(db: Queryable, uuids: readonly string[]) {
  return subjectRefsOfOperation(db, uuids).orderBy('s.id').forUpdate().execute();
}

/**
 * Lock the subjects whose subjectId matches the LIKE `pattern` (every subject without one) and that meet
 * `condition`, in id order, and answer their key columns.
 */
export function lockSubjectKeysMatching(db: Queryable, pattern: string | undefined, condition?: SubjectCondition) {
  let query = db.selectFrom('subjects').select(keyColumns);
  if (pattern !== undefined) query = query.where('subject_id', 'like', pattern);
  if (condition) query = query.where(condition('subjects.enrollment_operation_uuid'));
  return query.orderBy('id').forUpdate().execute();
}

/** The subject of this subjectId (its row id and subjectId), whatever its status. */
export function subjectRefBySubjectId(
  db: Queryable,
  subjectId: string,
): Promise<{ id: number; subject_id: string } | undefined> {
  return db.selectFrom('subjects').select(['id', 'subject_id']).where('subject_id', '=', subjectId).executeTakeFirst();
}

/** Whether a subject with this subjectId exists (in any status). */
export async function subjectIdTaken(db: Queryable, subjectId: string): Promise<boolean> {
  return (await subjectRefBySubjectId(db, subjectId)) !== undefined;
}
