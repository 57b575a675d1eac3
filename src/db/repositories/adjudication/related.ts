import type { OperationsTable } from '../../tables.js';
import type { Queryable } from '../queryable.js';

/**
 * What adjudication reads and changes outside its own tables: the adjudicator's account row (locked so one
 * adjudicator's calls queue), the probe subject's status, and the ENROLL operation that opened a case.
 */

/** Chunk of a bulk update: one statement's parameter list stays small whatever the store holds. */
const CHUNK = 500;

/**
 * Lock an account's row FOR NO KEY UPDATE: one adjudicator's simultaneous calls are then served one after the
 * other (and cannot collect two leases), while the row can still be referenced by new decisions.
 */
export async function lockAdjudicatorAccount(trx: Queryable, accountId: number): Promise<void> {
  await trx.selectFrom('accounts').select('id').where('id', '=', accountId).forNoKeyUpdate().execute();
}

/** The user name of an account, or undefined once it is deleted. */
export async function findAccountUsername(db: Queryable, accountId: number): Promise<string | undefined> {
  const row = await db.selectFrom('accounts').select('username').where('id', '=', accountId).executeTakeFirst();
  return row?.username;
}

/** Give a probe subject its final status; answers its internal id, or undefined when it no longer exists. */
export function setSubjectStatus(
  trx: Queryable,
  subjectId: string,
  status: 'ENROLLED' | 'REJECTED',
  now: Date,
): Promise<{ id: number; subject_id: string } | undefined> {
  return trx
    .updateTable('subjects')
    .set({ status, updated_at: now })
    .where('subject_id', '=', subjectId)
    .returning(['id', 'subject_id'])
    .executeTakeFirst();
}

/** REJECT those of these subjects still PENDING_ADJUDICATION; answers how many changed. */
export async function rejectPendingSubjects(trx: Queryable, subjectIds: readonly string[], now: Date): Promise<number> {
  let changed = 0;
  for (let i = 0; i < subjectIds.length; i += CHUNK) {
    const result = await trx
      .updateTable('subjects')
      .set({ status: 'REJECTED', updated_at: now })
      .where('subject_id', 'in', subjectIds.slice(i, i + CHUNK))
      .where('status', '=', 'PENDING_ADJUDICATION')
      .executeTakeFirstOrThrow();
    changed += Number(result.numUpdatedRows);
  }
  return changed;
}

/**
 * Give the ENROLL operations with these UUIDs a new status, only those still PENDING_ADJUDICATION (a row some
 * other path already finished is left as it is); answers how many changed.
 */
export async function settlePendingEnrolOperations(
  trx: Queryable,
  operationUuids: readonly string[],
  status: OperationsTable['status'],
): Promise<number> {
  let changed = 0;
  for (let i = 0; i < operationUuids.length; i += CHUNK) {
    const result = await trx
      .updateTable('operations')
      .set({ status })
      .where('uuid', 'in', operationUuids.slice(i, i + CHUNK))
      .where('type', '=', 'ENROLL')
      .where('status', '=', 'PENDING_ADJUDICATION')
      .executeTakeFirst();
    changed += Number(result.numUpdatedRows);
  }
  return changed;
}
