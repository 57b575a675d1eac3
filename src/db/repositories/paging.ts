import type { SelectQueryBuilder } from 'kysely';

/**
 * The paging block every list of the API repeats: order by the sorted column, break ties by id (so pages
 * never overlap or skip a row), then cut the page. With its `{count}` twin, which runs the same filtered
 * query so that a page and its count never disagree.
 */

/** Which page of which size (`page` counts from 0). */
export interface PageWindow {
  page: number;
  size: number;
}

/** How a list is sorted: a column already mapped through an allow-list (services/query-helpers.ts sortColumn). */
export interface ListOrder {
  column: string;
  direction: 'asc' | 'desc';
  /** Rows without a value sort last in either direction (e.g. `score,desc` starts with the best scores). */
  nullsLast?: boolean;
  /** The column that breaks ties, `id` unless the query aliases its table (e.g. `d.id`). */
  tieColumn?: string;
  /** The direction of the tie-break; the sort's own direction unless a list says otherwise. */
  tieDirection?: 'asc' | 'desc';
}

/**
 * `query` ordered by `order`, then by its tie-break column, limited to one page. The column names are checked
 * by the allow-lists that produce them, so the builder is typed loosely here and handed back as it came.
 */
export function sortedPage<Q extends SelectQueryBuilder<any, any, any>>(
  query: Q,
  order: ListOrder,
  window: PageWindow,
): Q {
  const tieColumn = order.tieColumn ?? 'id';
  const loose = query as SelectQueryBuilder<any, any, any>;
  const sorted = order.nullsLast
    ? loose.orderBy(order.column, (ob) => (order.direction === 'desc' ? ob.desc() : ob.asc()).nullsLast())
    : loose.orderBy(order.column, order.direction);
  return sorted
    .orderBy(tieColumn, order.tieDirection ?? order.direction)
    .limit(window.size)
    .offset(window.page * window.size) as Q;
}

/** How many rows a filtered query matches (count(*) is int8: one driver gives a number, one a string). */
export async function countRows<DB, TB extends keyof DB>(query: SelectQueryBuilder<DB, TB, object>): Promise<number> {
  const row = await query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  return Number((row as { count: number | string }).count);
}
