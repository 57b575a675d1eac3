import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { Database } from '../../db/tables.js';
import type { OperationsCountQuery, OperationsQuery } from '../../schemas/operations.js';
import type { ServiceContext } from '../context.js';
import { notFound } from '../errors.js';
import { ownsOperation, type Owner } from '../ownership.js';
import { sortColumn } from '../query-helpers.js';
import { presentOperation } from './record.js';

/**
 * The read side of the operation log (seed 4.10): `getLog` and its `getLogCount` twin share one filter builder
 * so a page and its count can never disagree, and single operations are found by id or by UUID. Every answer
 * goes through {@link presentOperation}, so internal columns (`details`) never reach a client.
 */

type Db = Kysely<Database>;
export type OperationFilter = z.output<typeof OperationsCountQuery>;
export type OperationPageQuery = z.output<typeof OperationsQuery>;

/** Sortable fields of `getLog`, mapped to columns (the schema admits only these names). */
const operationSortColumns = {
  id: 'id',
  createdAt: 'created_at',
  type: 'type',
  status: 'status',
  subjectId: 'subject_id',
  score: 'score',
  durationMs: 'duration_ms',
} as const;

/** `operations` narrowed by the filters of domain.md; every filter is an exact match but the inclusive created range. */
export function filteredOperations(db: Db, filter: Partial<OperationFilter>) {
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
 * `getLog`: a page of operations. A log reads newest first, so without `sort` the order is `createdAt,desc`.
 * Operations without a score or subject (a CHECK, a failed IDENTIFY) sort last in either direction, so that
 * `score,desc` starts with the best scores; ties are broken by id in the same direction, so pages never overlap.
 */
export async function listOperations(ctx: ServiceContext, query: OperationPageQuery) {
  const [column, direction] = sortColumn(operationSortColumns, query.sort ?? { field: 'createdAt', direction: 'desc' }, 'createdAt');
  const rows = await filteredOperations(ctx.db, query)
    .selectAll()
    .orderBy(column, (ob) => (direction === 'desc' ? ob.desc() : ob.asc()).nullsLast())
    .orderBy('id', direction)
    .limit(query.size)
    .offset(query.page * query.size)
    .execute();
  return rows.map(presentOperation);
}

/** `getLogCount`: how many operations the same filters match. */
export async function countOperations(ctx: ServiceContext, filter: Partial<OperationFilter>) {
  const row = await filteredOperations(ctx.db, filter).select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  return { count: Number(row.count) };
}

/** `getOperationById`: one operation by its numeric id; 404 when there is none. */
export async function operationById(ctx: ServiceContext, id: number) {
  const row = await ctx.db.selectFrom('operations').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound(`Operation ${id}`);
  return presentOperation(row);
}

/**
 * `getOperationByUUID`: one operation by its UUID; 404 when there is none. With an `owner` (the user surface),
 * only an operation recorded for that account is found (another account's answers 404, so its existence is
 * not disclosed): callers see their own operations, never the log of others with its candidates and scores.
 * The rule is the one of services/ownership.ts.
 */
export async function operationByUuid(ctx: ServiceContext, uuid: string, owner: Owner = null) {
  let query = ctx.db.selectFrom('operations').selectAll().where('uuid', '=', uuid);
  if (owner) query = query.where(ownsOperation('operations.account_id', owner));
  const row = await query.executeTakeFirst();
  if (!row) throw notFound(`Operation ${uuid}`);
  return presentOperation(row);
}
