import { likePrefix } from '../like.js';
import { countRows, sortedPage, type ListOrder, type PageWindow } from '../paging.js';
import type { Queryable } from '../queryable.js';
import { decodeCase, type CaseRow, type Outcome } from './cases.js';
import { decisionsWithAuthors, decodeDecision, type DecisionRow } from './decisions.js';

/**
 * Pages and counts of the pending store, the solved store and the decisions. One filter builder per list,
 * shared by the page and its count so that they never disagree.
 */

interface PendingFilter {
  /** OPEN and ASSIGNED depend on the clock: a lease that ran out makes the case OPEN again. */
  status?: 'OPEN' | 'ASSIGNED' | 'CONFLICTED';
  /** A prefix of the probe's subjectId, matched literally. */
  subjectId?: string;
  assignedTo?: number;
  createdFrom?: Date;
  createdTo?: Date;
}

interface SolvedFilter {
  subjectId?: string;
  outcome?: Outcome;
  createdFrom?: Date;
  createdTo?: Date;
  solvedFrom?: Date;
  solvedTo?: Date;
}

interface DecisionFilter {
  caseId?: number;
  accountId?: number;
  decision?: Outcome;
  createdFrom?: Date;
  createdTo?: Date;
}

/** Pending cases, with `status` evaluated at `now` exactly as services/adjudication/present.ts pendingStatus shows it. */
function filteredPending(db: Queryable, filter: PendingFilter, now: Date) {
  let query = db.selectFrom('adjudication_cases').where('status', 'in', ['PENDING', 'CONFLICTED']);
  if (filter.status === 'CONFLICTED') query = query.where('status', '=', 'CONFLICTED');
  if (filter.status === 'ASSIGNED')
    query = query
      .where('status', '=', 'PENDING')
      .where('assigned_to', 'is not', null)
      .where('lease_expires_at', '>', now);
  if (filter.status === 'OPEN') {
    query = query
      .where('status', '=', 'PENDING')
      .where((eb) =>
        eb.or([eb('assigned_to', 'is', null), eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)]),
      );
  }
  if (filter.subjectId) query = query.where('subject_id', 'like', likePrefix(filter.subjectId));
  if (filter.assignedTo !== undefined) query = query.where('assigned_to', '=', filter.assignedTo);
  if (filter.createdFrom) query = query.where('created_at', '>=', filter.createdFrom);
  if (filter.createdTo) query = query.where('created_at', '<=', filter.createdTo);
  return query;
}

function filteredSolved(db: Queryable, filter: SolvedFilter) {
  let query = db.selectFrom('adjudication_cases').where('status', '=', 'SOLVED');
  if (filter.subjectId) query = query.where('subject_id', 'like', likePrefix(filter.subjectId));
  if (filter.outcome) query = query.where('outcome', '=', filter.outcome);
  if (filter.createdFrom) query = query.where('created_at', '>=', filter.createdFrom);
  if (filter.createdTo) query = query.where('created_at', '<=', filter.createdTo);
  if (filter.solvedFrom) query = query.where('solved_at', '>=', filter.solvedFrom);
  if (filter.solvedTo) query = query.where('solved_at', '<=', filter.solvedTo);
  return query;
}

function filteredDecisions(db: Queryable, filter: DecisionFilter) {
  let query = db.selectFrom('adjudication_decisions');
  if (filter.caseId !== undefined) query = query.where('case_id', '=', filter.caseId);
  if (filter.accountId !== undefined) query = query.where('account_id', '=', filter.accountId);
  if (filter.decision) query = query.where('decision', '=', filter.decision);
  if (filter.createdFrom) query = query.where('created_at', '>=', filter.createdFrom);
  if (filter.createdTo) query = query.where('created_at', '<=', filter.createdTo);
  return query;
}

/** A page of the pending store; cases without a value in the sorted column (never assigned) sort last. */
export async function findPendingPage(
  db: Queryable,
  filter: PendingFilter,
  now: Date,
  order: ListOrder,
  window: PageWindow,
): Promise<CaseRow[]> {
  const rows = await sortedPage(
    filteredPending(db, filter, now).selectAll(),
    { ...order, nullsLast: true },
    window,
  ).execute();
  return rows.map(decodeCase);
}

export function countPending(db: Queryable, filter: PendingFilter, now: Date): Promise<number> {
  return countRows(filteredPending(db, filter, now));
}

export async function findSolvedPage(
  db: Queryable,
  filter: SolvedFilter,
  order: ListOrder,
  window: PageWindow,
): Promise<CaseRow[]> {
  const rows = await sortedPage(filteredSolved(db, filter).selectAll(), order, window).execute();
  return rows.map(decodeCase);
}

export function countSolved(db: Queryable, filter: SolvedFilter): Promise<number> {
  return countRows(filteredSolved(db, filter));
}

/** A page of decisions with their authors' names; `order.column` is a column of `adjudication_decisions`. */
export async function findDecisionPage(
  db: Queryable,
  filter: DecisionFilter,
  order: ListOrder,
  window: PageWindow,
): Promise<DecisionRow[]> {
  const ids = filteredDecisions(db, filter).select('id');
  const query = decisionsWithAuthors(db).where('d.id', 'in', ids);
  const rows = await sortedPage(query, { ...order, column: `d.${order.column}`, tieColumn: 'd.id' }, window).execute();
  return rows.map(decodeDecision);
}

export function countDecisions(db: Queryable, filter: DecisionFilter): Promise<number> {
  return countRows(filteredDecisions(db, filter));
}
