import type { Insertable, Selectable } from 'kysely';
import type { AdjudicationDecisionsTable } from '../../tables.js';
import { asDate } from '../decode.js';
import type { Queryable } from '../queryable.js';

/** Rows of `adjudication_decisions`: one per account per case, oldest first wherever a case's are listed. */

/** A decision with its author's user name (null once the account is deleted). */
export type DecisionRow = Selectable<AdjudicationDecisionsTable> & { username: string | null };
type DecisionVote = Pick<DecisionRow, 'account_id' | 'decision'>;

/** Decisions with their authors' user names; every reader of decisions goes through this select. */
export function decisionsWithAuthors(db: Queryable) {
  return db
    .selectFrom('adjudication_decisions as d')
    .leftJoin('accounts as a', 'a.id', 'd.account_id')
    .select([
      'd.id',
      'd.case_id',
      'd.account_id',
      'a.username',
      'd.decision',
      'd.duplicate_of_subject_id',
      'd.comment',
      'd.created_at',
    ]);
}

export const decodeDecision = (row: DecisionRow): DecisionRow => ({ ...row, created_at: asDate(row.created_at) });

/** The decisions of these cases, oldest first (one query whatever the number of cases). */
export async function findDecisionsOfCases(db: Queryable, caseIds: readonly number[]): Promise<DecisionRow[]> {
  if (caseIds.length === 0) return [];
  const rows = await decisionsWithAuthors(db)
    .where('d.case_id', 'in', [...caseIds])
    .orderBy('d.id')
    .execute();
  return rows.map(decodeDecision);
}

export async function findDecisionById(db: Queryable, id: number): Promise<DecisionRow | undefined> {
  const row = await decisionsWithAuthors(db).where('d.id', '=', id).executeTakeFirst();
  return row && decodeDecision(row);
}

/** Who decided what on one case so far, oldest first (the agreement rule reads them in this order). */
export function findVotesOfCase(db: Queryable, caseId: number): Promise<DecisionVote[]> {
  return db
    .selectFrom('adjudication_decisions')
    .select(['account_id', 'decision'])
    .where('case_id', '=', caseId)
    .orderBy('id')
    .execute();
}

/** Record a decision; answers its id. */
export async function insertDecision(
  trx: Queryable,
  decision: Insertable<AdjudicationDecisionsTable>,
): Promise<number> {
  const row = await trx.insertInto('adjudication_decisions').values(decision).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** How many decisions these cases hold (counted before the cases go, since the delete cascades to them). */
export async function countDecisionsOfCases(db: Queryable, caseIds: readonly number[]): Promise<number> {
  if (caseIds.length === 0) return 0;
  const row = await db
    .selectFrom('adjudication_decisions')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('case_id', 'in', [...caseIds])
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
