import type { z } from 'zod';
import type { ExceptionsQuery } from '../../schemas/exceptions.js';
import type { ServiceContext } from '../context.js';
import { invalid, notFound } from '../errors.js';
import { escapeLike, sortColumn } from '../query-helpers.js';
import { exceptionColumns, presentException } from './present.js';

type ExceptionFilter = Pick<z.output<typeof ExceptionsQuery>, 'type' | 'operationId' | 'path' | 'surface' | 'from' | 'to'>;

function filtered(ctx: ServiceContext, filter: ExceptionFilter) {
  if (filter.from && filter.to && filter.from > filter.to) throw invalid('query.from', 'must not be later than to');
  let query = ctx.db.selectFrom('exceptions');
  if (filter.type) query = query.where('type', '=', filter.type);
  if (filter.operationId) query = query.where('operation_id', '=', filter.operationId);
  if (filter.path) query = query.where('path', 'like', `${escapeLike(filter.path)}%`);
  if (filter.surface) query = query.where('surface', '=', filter.surface);
  if (filter.from) query = query.where('timestamp', '>=', filter.from);
  if (filter.to) query = query.where('timestamp', '<', filter.to);
  return query;
}

const exceptionSort = { timestamp: 'timestamp', type: 'type', operationId: 'operation_id', path: 'path', surface: 'surface' } as const;

/** A page of the exception log by filter; newest first unless a sort is given. */
export async function listExceptions(ctx: ServiceContext, query: z.output<typeof ExceptionsQuery>) {
  const [column, direction] = query.sort ? sortColumn(exceptionSort, query.sort, 'timestamp') : (['timestamp', 'desc'] as const);
  const rows = await filtered(ctx, query)
    .select(exceptionColumns)
    .orderBy(column, direction)
    .orderBy('id', 'asc') // ties (same millisecond) keep a stable order across pages
    .limit(query.size)
    .offset(query.page * query.size)
    .execute();
  return rows.map(presentException);
}

/** How many exceptions match the same filters as the list. */
export async function countExceptions(ctx: ServiceContext, filter: ExceptionFilter) {
  const row = await filtered(ctx, filter).select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  return { count: Number(row.count) };
}

async function findException(ctx: ServiceContext, id: string) {
  const row = await ctx.db.selectFrom('exceptions').select(exceptionColumns).where('id', '=', id).executeTakeFirst();
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
