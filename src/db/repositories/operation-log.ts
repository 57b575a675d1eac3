import type { Expression, Insertable, Selectable, SqlBool } from 'kysely';
import type { Database, OperationsTable } from '../tables.js';
import { asDate, parsedJson } from './decode.js';
import { countRows, sortedPage, type ListOrder, type PageWindow } from './paging.js';
import type { Queryable } from './queryable.js';

/**
 * The biometric operation log (`operations`): one row per VERIFY, IDENTIFY, ENROLL, CHECK ... with its
 * outcome. Rows leave here decoded (jsonb as values, `created_at` as a Date), so presenters only rename.
 */

export type OperationRow = Selectable<OperationsTable>;

/** An operation row with its jsonb columns parsed and its timestamp a Date, whatever the driver gave. */
function decodeOperation(row: OperationRow): OperationRow {
  return {
    ...row,
    modalities: parsedJson(row.modalities),
    candidates: parsedJson(row.candidates),
    checks: parsedJson(row.checks),
    details: parsedJson(row.details),
    created_at: asDate(row.created_at),
  };
}

/** Write one operation row (jsonb columns as JSON text, see db/json.ts) and answer it as stored. */
export async function insertOperation(db: Queryable, values: Insertable<OperationsTable>): Promise<OperationRow> {
  return decodeOperation(await db.insertInto('operations').values(values).returningAll().executeTakeFirstOrThrow());
}

/** The filters of `getLog` and `getLogCount`: exact matches but the inclusive created range. */
interface OperationFilter {
  type?: OperationsTable['type'];
  status?: OperationsTable['status'];
  subjectId?: string;
  surface?: NonNullable<OperationsTable['surface']>;
  accountId?: number;
  createdFrom?: Date;
  createdTo?: Date;
}

function filteredOperations(db: Queryable, filter: OperationFilter) {
  let query = db.selectFrom('operations');
  if (filter.type) query = query.where('type', '=', filter.type);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.subjectId) query = query.where('subject_id', '=', filter.subjectId);
  if (filter.surface) query = query.where('surface', '=', filter.surface);
  if (filter.accountId !== undefined) query = query.where('account_id', '=', filter.accountId);
  if (filter.createdFrom) query = query.where('created_at', '>=', filter.createdFrom);
  if (filter.createdTo) query = query.where('created_at', '<=', filter.createdTo);
  return query;
}

/**
 * A page of the log. Rows without a value in the sorted column (a CHECK has no score or subject) sort last in
 * either direction; ties are broken by id in the sort's direction, so pages never overlap.
 */
export async function findOperationPage(
  db: Queryable,
  filter: OperationFilter,
  order: ListOrder,
  window: PageWindow,
): Promise<OperationRow[]> {
  const rows = await sortedPage(
    filteredOperations(db, filter).selectAll(),
    { ...order, nullsLast: true },
    window,
  ).execute();
  return rows.map(decodeOperation);
}

export function countOperations(db: Queryable, filter: OperationFilter): Promise<number> {
  return countRows(filteredOperations(db, filter));
}

export async function findOperationById(db: Queryable, id: number): Promise<OperationRow | undefined> {
  const row = await db.selectFrom('operations').selectAll().where('id', '=', id).executeTakeFirst();
  return row && decodeOperation(row);
}

/**
 * One operation by UUID; with `condition`, only when the row meets it (services/ownership.ts `ownsOperation`
 * says whose an operation is, given the column of its account).
 */
export async function findOperationByUuid(
  db: Queryable,
  uuid: string,
  condition?: (accountColumn: 'operations.account_id') => Expression<SqlBool>,
): Promise<OperationRow | undefined> {
  let query = db.selectFrom('operations').selectAll().where('uuid', '=', uuid);
  if (condition) query = query.where(condition('operations.account_id'));
  const row = await query.executeTakeFirst();
  return row && decodeOperation(row);
}

/** Lock the operations with these UUIDs (for deletion) and answer the UUIDs found, as stored. */
export async function lockOperationsByUuids(trx: Queryable, uuids: readonly string[]): Promise<string[]> {
  const rows = await trx
    .selectFrom('operations')
    .select('uuid')
    .where('uuid', 'in', [...uuids])
    .forUpdate()
    .execute();
  return rows.map((r) => r.uuid);
}

/**
 * Which stored subjects depend on these operations: the subject each enrolled, and the subject owning any image
 * or sample stored under one of them. One row per (operation UUID, subject), duplicates removed.
 */
export function findSubjectsDependingOnOperations(
  db: Queryable,
  uuids: readonly string[],
): Promise<{ uuid: string; subject_id: string }[]> {
  const list = [...uuids];
  const enrolments = db
    .selectFrom('subjects')
    .select(['enrollment_operation_uuid as uuid', 'subject_id'])
    .where('enrollment_operation_uuid', 'in', list);
  const owned = (table: 'images' | 'face_samples' | 'voice_samples') =>
    db
      .selectFrom(`${table} as x` as 'images as x')
      .innerJoin('subjects as s', 's.id', 'x.subject_ref')
      .select(['x.operation_uuid as uuid', 's.subject_id'])
      .where('x.operation_uuid', 'in', list);
  return enrolments
    .union(owned('images'))
    .union(owned('face_samples'))
    .union(owned('voice_samples'))
    .execute()
    .then((rows) => rows.map((r) => ({ uuid: String(r.uuid), subject_id: r.subject_id })));
}

/**
 * Delete these operations with the probe data stored under them that belongs to no subject (face samples
 * first: they reference images). Answers how many operation rows went.
 */
export async function deleteOperationsWithProbes(trx: Queryable, uuids: readonly string[]): Promise<number> {
  const list = [...uuids];
  for (const table of ['face_samples', 'voice_samples', 'images'] as const) {
    await trx
      .deleteFrom(table as 'images')
      .where('operation_uuid', 'in', list)
      .where('subject_ref', 'is', null)
      .execute();
  }
  const result = await trx.deleteFrom('operations').where('uuid', 'in', list).executeTakeFirstOrThrow();
  return Number(result.numDeletedRows);
}

/** A probe image of an operation (subject_ref null): kept for review and audit. */
export async function insertProbeImage(
  trx: Queryable,
  image: Omit<Insertable<Database['images']>, 'subject_ref' | 'kind'>,
): Promise<void> {
  await trx
    .insertInto('images')
    .values({ ...image, subject_ref: null, kind: 'ORIGINAL' })
    .execute();
}

/** A probe recording of an operation (subject_ref null). */
export async function insertProbeVoiceSample(
  trx: Queryable,
  sample: Insertable<Database['voice_samples']>,
): Promise<void> {
  await trx.insertInto('voice_samples').values(sample).execute();
}
