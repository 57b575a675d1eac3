import type { Kysely, Selectable } from 'kysely';
import type { AdjudicationCasesTable, Database } from '../../db/tables.js';

/**
 * Rows of `adjudication_cases` and `adjudication_decisions` as the `AdjudicationPending`,
 * `AdjudicationSolved` and `AdjudicatorDecision` models show them. Both stores share one table (status
 * SOLVED is the solved store), so these functions are the one place that turns a row into either model.
 */

type Db = Kysely<Database>;
export type CaseRow = Selectable<AdjudicationCasesTable>;

/** A decision row joined with its account's user name (absent once the account is deleted). */
export interface DecisionRow {
  id: number;
  case_id: number;
  account_id: number;
  username: string | null;
  decision: 'DUPLICATE' | 'NOT_DUPLICATE';
  duplicate_of_subject_id: string | null;
  comment: string;
  created_at: Date | string;
}

const iso = (at: Date | string) => new Date(at).toISOString();

/** Decisions with their authors' user names; every reader goes through this select. */
export function decisionRows(db: Db) {
  return db
    .selectFrom('adjudication_decisions as d')
    .leftJoin('accounts as a', 'a.id', 'd.account_id')
    .select(['d.id', 'd.case_id', 'd.account_id', 'a.username', 'd.decision', 'd.duplicate_of_subject_id', 'd.comment', 'd.created_at']);
}

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

export type PresentedDecision = ReturnType<typeof presentDecision>;

/** The decisions of these cases, grouped by case, oldest first; one query whatever the page size. */
export async function decisionsOfCases(db: Db, caseIds: readonly number[]): Promise<Map<number, PresentedDecision[]>> {
  const byCase = new Map<number, PresentedDecision[]>();
  if (caseIds.length === 0) return byCase;
  const rows = await decisionRows(db).where('d.case_id', 'in', [...caseIds]).orderBy('d.id').execute();
  for (const row of rows) {
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
export function pendingStatus(row: CaseRow, now: Date): 'OPEN' | 'ASSIGNED' | 'CONFLICTED' {
  if (row.status === 'CONFLICTED') return 'CONFLICTED';
  const leased = row.assigned_to !== null && row.lease_expires_at !== null && new Date(row.lease_expires_at) > now;
  return leased ? 'ASSIGNED' : 'OPEN';
}

/** The case's candidates (a jsonb column, text on drivers that do not parse it). */
export const candidatesOf = (row: CaseRow): CaseRow['candidates'] => (typeof row.candidates === 'string' ? JSON.parse(row.candidates) : row.candidates);

/** A pending (or conflicted) case; the last assignment stays visible after its lease expired (status tells). */
export function presentPending(row: CaseRow, decisions: PresentedDecision[], now: Date) {
  return {
    id: row.id,
    operationUuid: row.operation_uuid,
    subjectId: row.subject_id,
    candidates: candidatesOf(row),
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
    candidates: candidatesOf(row),
    createdAt: iso(row.created_at),
    solvedAt: iso(row.solved_at ?? row.created_at),
    outcome,
    ...(outcome === 'DUPLICATE' && named?.duplicateOfSubjectId ? { duplicateOfSubjectId: named.duplicateOfSubjectId } : {}),
    decisions,
  };
}
