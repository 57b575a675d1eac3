import type { z } from 'zod';
import type { OperationsCountQuery, OperationsQuery } from '../../schemas/operations.js';
import {
  countOperations as countMatching,
  findOperationById,
  findOperationByUuid,
  findOperationPage,
} from '../../db/repositories/operation-log.js';
import type { ServiceContext } from '../context.js';
import { notFound } from '../errors.js';
import { ownsOperation, type Owner } from '../ownership.js';
import { sortColumn } from '../query-helpers.js';
import { presentOperation } from './record.js';

/**
 * The read side of the operation log (seed 4.10): `getLog` and its `getLogCount` twin share one filter (in the
 * repository) so a page and its count can never disagree, and single operations are found by id or by UUID.
 * Every answer goes through {@link presentOperation}, so internal columns (`details`) never reach a client.
 */

type OperationFilter = z.output<typeof OperationsCountQuery>;
type OperationPageQuery = z.output<typeof OperationsQuery>;

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

/**
 * `getLog`: a page of operations. A log reads newest first, so without `sort` the order is `createdAt,desc`.
 * Operations without a score or subject (a CHECK, a failed IDENTIFY) sort last in either direction, so that
 * `score,desc` starts with the best scores; ties are broken by id in the same direction, so pages never overlap.
 */
export async function listOperations(ctx: ServiceContext, query: OperationPageQuery) {
  const [column, direction] = sortColumn(
    operationSortColumns,
    query.sort ?? { field: 'createdAt', direction: 'desc' },
    'createdAt',
  );
  const rows = await findOperationPage(ctx.db, query, { column, direction }, query);
  return rows.map(presentOperation);
}

/** `getLogCount`: how many operations the same filters match. */
export async function countOperations(ctx: ServiceContext, filter: Partial<OperationFilter>) {
  return { count: await countMatching(ctx.db, filter) };
}

/** `getOperationById`: one operation by its numeric id; 404 when there is none. */
export async function operationById(ctx: ServiceContext, id: number) {
  const row = await findOperationById(ctx.db, id);
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
  const row = await findOperationByUuid(
    ctx.db,
    uuid,
    owner ? (accountColumn) => ownsOperation(accountColumn, owner) : undefined,
  );
  if (!row) throw notFound(`Operation ${uuid}`);
  return presentOperation(row);
}
