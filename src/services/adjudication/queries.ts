import type { z } from 'zod';
import type { DecisionsQuery, PendingQuery, SolvedQuery } from '../../schemas/adjudication.js';
import type { ServiceContext } from '../context.js';
import { sortColumn } from '../query-helpers.js';
import { filteredDecisions, filteredPending, filteredSolved, type DecisionFilter, type PendingFilter, type SolvedFilter } from './filters.js';
import { decisionRows, decisionsOfCases, presentDecision, presentPending, presentSolved } from './present.js';

/**
 * The read side of adjudication: pages and counts of the pending store, the solved store and the decisions.
 * Ties are broken by id in the same direction so pages never overlap; a case's decisions come in one query
 * per page.
 */

/** The `{count}` answer of a filtered table (count(*) is int8; the drivers parse it as a number or string). */
async function count(query: ReturnType<typeof filteredSolved> | ReturnType<typeof filteredDecisions>) {
  const row = await (query as ReturnType<typeof filteredSolved>).select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  return { count: Number(row.count) };
}

const pendingSort = { id: 'id', createdAt: 'created_at', subjectId: 'subject_id', assignedAt: 'assigned_at', status: 'status' } as const;
const solvedSort = { id: 'id', createdAt: 'created_at', solvedAt: 'solved_at', subjectId: 'subject_id', outcome: 'outcome' } as const;
const decisionSort = { id: 'id', createdAt: 'created_at', caseId: 'case_id', accountId: 'account_id', decision: 'decision' } as const;

/** `getAdjudicationsPending`: oldest first unless sorted otherwise (the queue's order). */
export async function listPending(ctx: ServiceContext, query: z.output<typeof PendingQuery>) {
  const now = ctx.now();
  const [column, direction] = sortColumn(pendingSort, query.sort, 'createdAt');
  const rows = await filteredPending(ctx.db, query, now)
    .selectAll()
    .orderBy(column, (ob) => (direction === 'desc' ? ob.desc() : ob.asc()).nullsLast())
    .orderBy('id', direction)
    .limit(query.size)
    .offset(query.page * query.size)
    .execute();
  const decisions = await decisionsOfCases(ctx.db, rows.map((r) => r.id));
  return rows.map((r) => presentPending(r, decisions.get(r.id) ?? [], now));
}

export function countPending(ctx: ServiceContext, filter: Partial<PendingFilter>) {
  return count(filteredPending(ctx.db, filter, ctx.now()));
}

/** `getAdjudicationsSolved`: most recently solved first unless sorted otherwise. */
export async function listSolved(ctx: ServiceContext, query: z.output<typeof SolvedQuery>) {
  const [column, direction] = sortColumn(solvedSort, query.sort ?? { field: 'solvedAt', direction: 'desc' }, 'solvedAt');
  const rows = await filteredSolved(ctx.db, query)
    .selectAll()
    .orderBy(column, direction)
    .orderBy('id', direction)
    .limit(query.size)
    .offset(query.page * query.size)
    .execute();
  const decisions = await decisionsOfCases(ctx.db, rows.map((r) => r.id));
  return rows.map((r) => presentSolved(r, decisions.get(r.id) ?? []));
}

export function countSolved(ctx: ServiceContext, filter: Partial<SolvedFilter>) {
  return count(filteredSolved(ctx.db, filter));
}

/** `getAdjudicatorDecisions`: oldest first unless sorted otherwise. */
export async function listDecisions(ctx: ServiceContext, query: z.output<typeof DecisionsQuery>) {
  const [column, direction] = sortColumn(decisionSort, query.sort, 'id');
  const ids = filteredDecisions(ctx.db, query).select('id');
  const rows = await decisionRows(ctx.db)
    .where('d.id', 'in', ids)
    .orderBy(`d.${column}`, direction)
    .orderBy('d.id', direction)
    .limit(query.size)
    .offset(query.page * query.size)
    .execute();
  return rows.map(presentDecision);
}

export function countDecisions(ctx: ServiceContext, filter: Partial<DecisionFilter>) {
  return count(filteredDecisions(ctx.db, filter));
}
