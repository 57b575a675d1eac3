import { sql, type Insertable } from 'kysely';
import type { ExceptionRow, ExceptionsTable } from '../tables.js';
import { likePrefix } from './like.js';
import { countRows, sortedPage, type ListOrder, type PageWindow } from './paging.js';
import type { Queryable } from './queryable.js';

/** The exception log: one row per unexpected failure, written by services/exceptions/record.ts. */

/**
 * The columns of an exception row as the presenters read them. The timestamp is clamped by the database into
 * the range the API accepts (1970-01-01 to 9999-12-31, see DATE_RANGE in schemas/common.ts) before any driver
 * parses it: a row written before that rule (year 1 BC, `infinity`, year 50) would otherwise parse as an
 * invalid or century-shifted date, fail the list with a 500 and cut an export that had already answered 200.
 */
const exceptionColumns = [
  'id',
  'type',
  'message',
  'operation_id',
  'method',
  'path',
  'account_id',
  'surface',
  'call_stack',
  sql<Date>`greatest(least("timestamp", timestamptz '9999-12-31 23:59:59.999+00'), timestamptz '1970-01-01 00:00:00+00')`.as(
    'timestamp',
  ),
] as const;

/** The filters of `getExceptions` and its count; every one optional. */
export interface ExceptionFilter {
  type?: string;
  operationId?: string;
  /** A prefix of the request path, matched literally. */
  path?: string;
  surface?: string;
  /** Inclusive. */
  from?: Date;
  /** Exclusive. */
  to?: Date;
}

function filteredExceptions(db: Queryable, filter: ExceptionFilter) {
  let query = db.selectFrom('exceptions');
  if (filter.type) query = query.where('type', '=', filter.type);
  if (filter.operationId) query = query.where('operation_id', '=', filter.operationId);
  if (filter.path) query = query.where('path', 'like', likePrefix(filter.path));
  if (filter.surface) query = query.where('surface', '=', filter.surface);
  if (filter.from) query = query.where('timestamp', '>=', filter.from);
  if (filter.to) query = query.where('timestamp', '<', filter.to);
  return query;
}

/** A page of the log; ties (the same millisecond) are always broken by id ascending, whatever the sort. */
export function findExceptionPage(
  db: Queryable,
  filter: ExceptionFilter,
  order: ListOrder,
  window: PageWindow,
): Promise<ExceptionRow[]> {
  const query = filteredExceptions(db, filter).select(exceptionColumns);
  return sortedPage(query, { ...order, tieDirection: 'asc' }, window).execute();
}

export function countExceptions(db: Queryable, filter: ExceptionFilter): Promise<number> {
  return countRows(filteredExceptions(db, filter));
}

export function findExceptionById(db: Queryable, id: string): Promise<ExceptionRow | undefined> {
  return db.selectFrom('exceptions').select(exceptionColumns).where('id', '=', id).executeTakeFirst();
}

/** Every id, oldest first (ties by id): the order of an export, fixed before its batches are read. */
export async function listExceptionIdsOldestFirst(db: Queryable): Promise<string[]> {
  const rows = await db
    .selectFrom('exceptions')
    .select('id')
    .orderBy('timestamp', 'asc')
    .orderBy('id', 'asc')
    .execute();
  return rows.map((r) => r.id);
}

/** The rows of these ids, in no particular order (an id removed meanwhile is simply missing). */
export function findExceptionsByIds(db: Queryable, ids: readonly string[]): Promise<ExceptionRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('exceptions')
    .select(exceptionColumns)
    .where('id', 'in', [...ids])
    .execute();
}

export async function insertException(db: Queryable, row: Insertable<ExceptionsTable>): Promise<void> {
  await db.insertInto('exceptions').values(row).execute();
}

/** Insert these rows, skipping ids already present; answers the ids actually written. */
export async function insertExceptionsSkippingKnown(
  db: Queryable,
  rows: readonly Insertable<ExceptionsTable>[],
): Promise<string[]> {
  if (rows.length === 0) return [];
  const written = await db
    .insertInto('exceptions')
    .values([...rows])
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id')
    .execute();
  return written.map((r) => r.id);
}

/** Empty the log; answers how many rows went. */
export async function deleteAllExceptions(db: Queryable): Promise<number> {
  const result = await db.deleteFrom('exceptions').executeTakeFirst();
  return Number(result.numDeletedRows);
}
