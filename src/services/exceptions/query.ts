import type { z } from 'zod';
import type { ExceptionsQuery } from '../../schemas/exceptions.js';
import type { ServiceContext } from '../context.js';
import { invalid, notFound } from '../errors.js';
import { sortColumn } from '../query-helpers.js';
import {
  countExceptions as countMatching,
  findExceptionById,
  findExceptionPage,
  type ExceptionFilter,
} from '../../db/repositories/exceptions.js';
import { presentException } from './present.js';

type ExceptionQueryFilter = Pick<
  z.output<typeof ExceptionsQuery>,
  'type' | 'operationId' | 'path' | 'surface' | 'from' | 'to'
>;

/** The filters as the repository takes them, once the range is known to be the right way round. */
function checkedFilter(filter: ExceptionQueryFilter): ExceptionFilter {
  if (filter.from && filter.to && filter.from > filter.to) throw invalid('query.from', 'must not be later than to');
  return filter;
}

const exceptionSort = {
  timestamp: 'timestamp',
  type: 'type',
  operationId: 'operation_id',
  path: 'path',
  surface: 'surface',
} as const;

/** A page of the exception log by filter; newest first unless a sort is given. */
export async function listExceptions(ctx: ServiceContext, query: z.output<typeof ExceptionsQuery>) {
  const [column, direction] = query.sort
    ? sortColumn(exceptionSort, query.sort, 'timestamp')
    : (['timestamp', 'desc'] as const);
  const rows = await findExceptionPage(ctx.db, checkedFilter(query), { column, direction }, query);
  return rows.map(presentException);
}

/** How many exceptions match the same filters as the list. */
export async function countExceptions(ctx: ServiceContext, filter: ExceptionQueryFilter) {
  return { count: await countMatching(ctx.db, checkedFilter(filter)) };
}

async function findException(ctx: ServiceContext, id: string) {
  const row = await findExceptionById(ctx.db, id);
  if (!row) throw notFound(`Exception '${id}'`);
  return row;
}

/** One exception by id, without its call stack; 404 when unknown. */
export async function getException(ctx: ServiceContext, id: string) {
  return presentException(await findException(ctx, id));
}

/** The call stack of one exception; 404 when unknown. Served to ADMIN only, since stacks show code paths. */
export async function getExceptionCallStack(ctx: ServiceContext, id: string) {
  const row = await findException(ctx, id);
  return { id: row.id, callStack: row.call_stack };
}
