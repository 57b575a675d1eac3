import type { z } from 'zod';
import type {
  DecisionsCountQuery,
  DecisionsQuery,
  PendingCountQuery,
  PendingQuery,
  SolvedCountQuery,
  SolvedQuery,
} from '../../schemas/adjudication.js';
import {
  countDecisions as countMatchingDecisions,
  countPending as countMatchingPending,
  countSolved as countMatchingSolved,
  findDecisionPage,
  findPendingPage,
  findSolvedPage,
} from '../../db/repositories/adjudication/lists.js';
import type { ServiceContext } from '../context.js';
import { sortColumn } from '../query-helpers.js';
import { decisionsOfCases, presentDecision, presentPending, presentSolved } from './present.js';

/**
 * The read side of adjudication: pages and counts of the pending store, the solved store and the decisions.
 * Ties are broken by id in the same direction so pages never overlap; a case's decisions come in one query
 * per page. Each page and its count share one filter (db/repositories/adjudication/lists.ts).
 */

type PendingFilter = z.output<typeof PendingCountQuery>;
type SolvedFilter = z.output<typeof SolvedCountQuery>;
type DecisionFilter = z.output<typeof DecisionsCountQuery>;

const pendingSort = {
  id: 'id',
  createdAt: 'created_at',
  subjectId: 'subject_id',
  assignedAt: 'assigned_at',
  status: 'status',
} as const;
const solvedSort = {
  id: 'id',
  createdAt: 'created_at',
  solvedAt: 'solved_at',
  subjectId: 'subject_id',
  outcome: 'outcome',
} as const;
const decisionSort = {
  id: 'id',
  createdAt: 'created_at',
  caseId: 'case_id',
  accountId: 'account_id',
  decision: 'decision',
} as const;

/** `getAdjudicationsPending`: oldest first unless sorted otherwise (the queue's order). */
export async function listPending(ctx: ServiceContext, query: z.output<typeof PendingQuery>) {
  const now = ctx.now();
  const [column, direction] = sortColumn(pendingSort, query.sort, 'createdAt');
  const rows = await findPendingPage(ctx.db, query, now, { column, direction }, query);
  const decisions = await decisionsOfCases(
    ctx.db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => presentPending(r, decisions.get(r.id) ?? [], now));
}

export async function countPending(ctx: ServiceContext, filter: Partial<PendingFilter>) {
  return { count: await countMatchingPending(ctx.db, filter, ctx.now()) };
}

/** `getAdjudicationsSolved`: most recently solved first unless sorted otherwise. */
export async function listSolved(ctx: ServiceContext, query: z.output<typeof SolvedQuery>) {
  const [column, direction] = sortColumn(
    solvedSort,
    query.sort ?? { field: 'solvedAt', direction: 'desc' },
    'solvedAt',
  );
  const rows = await findSolvedPage(ctx.db, query, { column, direction }, query);
  const decisions = await decisionsOfCases(
    ctx.db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => presentSolved(r, decisions.get(r.id) ?? []));
}

export async function countSolved(ctx: ServiceContext, filter: Partial<SolvedFilter>) {
  return { count: await countMatchingSolved(ctx.db, filter) };
}

/** `getAdjudicatorDecisions`: oldest first unless sorted otherwise. */
export async function listDecisions(ctx: ServiceContext, query: z.output<typeof DecisionsQuery>) {
  const [column, direction] = sortColumn(decisionSort, query.sort, 'id');
  const rows = await findDecisionPage(ctx.db, query, { column, direction }, query);
  return rows.map(presentDecision);
}

export async function countDecisions(ctx: ServiceContext, filter: Partial<DecisionFilter>) {
  return { count: await countMatchingDecisions(ctx.db, filter) };
}
