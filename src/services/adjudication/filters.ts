import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { Database } from '../../db/tables.js';
import type { DecisionsCountQuery, PendingCountQuery, SolvedCountQuery } from '../../schemas/adjudication.js';
import { escapeLike } from '../query-helpers.js';

/**
 * One filter builder per store, shared by each list and its count so a page and its count never disagree.
 * The pending store is every case not SOLVED (PENDING or CONFLICTED); the solved store is status SOLVED.
 */

type Db = Kysely<Database>;

export type PendingFilter = z.output<typeof PendingCountQuery>;
export type SolvedFilter = z.output<typeof SolvedCountQuery>;
export type DecisionFilter = z.output<typeof DecisionsCountQuery>;

/**
 * Pending cases. `status` OPEN and ASSIGNED depend on the clock: a lease that ran out makes the case OPEN
 * again, exactly as {@link pendingStatus} presents it.
 */
export function filteredPending(db: Db, filter: Partial<PendingFilter>, now: Date) {
  let query = db.selectFrom('adjudication_cases').where('status', 'in', ['PENDING', 'CONFLICTED']);
  if (filter.status === 'CONFLICTED') query = query.where('status', '=', 'CONFLICTED');
  if (filter.status === 'ASSIGNED') query = query.where('status', '=', 'PENDING').where('assigned_to', 'is not', null).where('lease_expires_at', '>', now);
  if (filter.status === 'OPEN') {
    query = query
      .where('status', '=', 'PENDING')
      .where((eb) => eb.or([eb('assigned_to', 'is', null), eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)]));
  }
  if (filter.subjectId) query = query.where('subject_id', 'like', `${escapeLike(filter.subjectId)}%`);
  if (filter.assignedTo !== undefined) query = query.where('assigned_to', '=', filter.assignedTo);
  if (filter.createdFrom) query = query.where('created_at', '>=', filter.createdFrom);
  if (filter.createdTo) query = query.where('created_at', '<=', filter.createdTo);
  return query;
}

export function filteredSolved(db: Db, filter: Partial<SolvedFilter>) {
  let query = db.selectFrom('adjudication_cases').where('status', '=', 'SOLVED');
  if (filter.subjectId) query = query.where('subject_id', 'like', `${escapeLike(filter.subjectId)}%`);
  if (filter.outcome) query = query.where('outcome', '=', filter.outcome);
  if (filter.createdFrom) query = query.where('created_at', '>=', filter.createdFrom);
  if (filter.createdTo) query = query.where('created_at', '<=', filter.createdTo);
  if (filter.solvedFrom) query = query.where('solved_at', '>=', filter.solvedFrom);
  if (filter.solvedTo) query = query.where('solved_at', '<=', filter.solvedTo);
  return query;
}

export function filteredDecisions(db: Db, filter: Partial<DecisionFilter>) {
  let query = db.selectFrom('adjudication_decisions');
  if (filter.caseId !== undefined) query = query.where('case_id', '=', filter.caseId);
  if (filter.accountId !== undefined) query = query.where('account_id', '=', filter.accountId);
  if (filter.decision) query = query.where('decision', '=', filter.decision);
  if (filter.createdFrom) query = query.where('created_at', '>=', filter.createdFrom);
  if (filter.createdTo) query = query.where('created_at', '<=', filter.createdTo);
  return query;
}
