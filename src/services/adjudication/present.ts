import { findDecisionsOfCases, type DecisionRow } from '../../db/repositories/adjudication/decisions.js';
import type { CaseRow } from '../../db/repositories/adjudication/cases.js';
import type { Queryable } from '../../db/repositories/queryable.js';

/**
 * Rows of `adjudication_cases` and `adjudication_decisions` as the `AdjudicationPending`,
 * `AdjudicationSolved` and `AdjudicatorDecision` models show them. Both stores share one table (status
 * SOLVED is the solved store), so these functions are the one place that turns a row into either model.
 */

/** Rows come decoded from the repository (timestamps as Dates, candidates parsed). */
const iso = (at: Date) => at.toISOString();

export function presentDecision(row: DecisionRow) {
  return {
    id: row.id,
    caseId: row.case_id,
    accountId: row.account_id,
    ...(row.username !== null ? { username: row.username } : {}),
    decision: row.decision,
    ...(row.duplicate_of_subject_id !== null ? { duplicateOfSubjectId: row.duplicate_of_subject_id } : {}),
    comment: row.comment,
    createdAt: iso(row.created_at),
  };
}

type PresentedDecision = ReturnType<typeof presentDecision>;

/** The decisions of these cases, grouped by case, oldest first; one query whatever the page size. */
export async function decisionsOfCases(
  db: Queryable,
  caseIds: readonly number[],
): Promise<Map<number, PresentedDecision[]>> {
  const byCase = new Map<number, PresentedDecision[]>();
  for (const row of await findDecisionsOfCases(db, caseIds)) {
    const list = byCase.get(row.case_id) ?? [];
    list.push(presentDecision(row));
    byCase.set(row.case_id, list);
  }
  return byCase;
}

/**
 * The pending status clients see: CONFLICTED as stored; a PENDING case is ASSIGNED while its lease runs and
 * OPEN otherwise (an expired lease returns the case to the pool without anyone having to clear it).
 */
function pendingStatus(row: CaseRow, now: Date): 'OPEN' | 'ASSIGNED' | 'CONFLICTED' {
  if (row.status === 'CONFLICTED') return 'CONFLICTED';
  const leased = row.assigned_to !== null && row.lease_expires_at !== null && row.lease_expires_at > now;
  return leased ? 'ASSIGNED' : 'OPEN';
}

/** A pending (or conflicted) case; the last assignment stays visible after its lease expired (status tells). */
export function presentPending(row: CaseRow, decisions: PresentedDecision[], now: Date) {
  return {
    id: row.id,
    operationUuid: row.operation_uuid,
    subjectId: row.subject_id,
    candidates: row.candidates,
    status: pendingStatus(row, now),
    createdAt: iso(row.created_at),
    ...(row.assigned_to !== null ? { assignedTo: row.assigned_to } : {}),
    ...(row.assigned_at ? { assignedAt: iso(row.assigned_at) } : {}),
    ...(row.lease_expires_at ? { leaseExpiresAt: iso(row.lease_expires_at) } : {}),
    decisions,
  };
}

/** A solved case; `duplicateOfSubjectId` comes from the latest decision that agrees with the outcome and names one. */
export function presentSolved(row: CaseRow, decisions: PresentedDecision[]) {
  // A SOLVED row always has its outcome (the solved store is read by status).
  const outcome = row.outcome!;
  const named = [...decisions].reverse().find((d) => d.decision === outcome && d.duplicateOfSubjectId);
  return {
    id: row.id,
    operationUuid: row.operation_uuid,
    subjectId: row.subject_id,
    candidates: row.candidates,
    createdAt: iso(row.created_at),
    solvedAt: iso(row.solved_at ?? row.created_at),
    outcome,
    ...(outcome === 'DUPLICATE' && named?.duplicateOfSubjectId
      ? { duplicateOfSubjectId: named.duplicateOfSubjectId }
      : {}),
    decisions,
  };
}
