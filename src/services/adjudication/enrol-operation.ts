import type { Transaction } from 'kysely';
import type { Database } from '../../db/tables.js';
import type { OperationStatus } from '../operation-log/record.js';

/**
 * The ENROLL operation that opened a case says PENDING_ADJUDICATION only while the case is pending: once the
 * probe subject gets its final status, the operation's status follows it, the way enrolment would have
 * recorded it had the answer been known then (ENROLLED -> SUCCESS, REJECTED -> DUPLICATE_FOUND). Without
 * this the log kept reporting a wait that had ended, and a reader of the operation could not tell how it went.
 */

/** What the operation says once its probe subject is ENROLLED or REJECTED. */
export const enrolOperationStatus = {
  ENROLLED: 'SUCCESS',
  REJECTED: 'DUPLICATE_FOUND',
} as const satisfies Record<'ENROLLED' | 'REJECTED', OperationStatus>;

/**
 * Give the ENROLL operations of these cases (by operation UUID) the status of their probe's final status, in
 * the transaction that settles the cases. Only operations still PENDING_ADJUDICATION change, so a row some
 * other path already finished is left as it is.
 */
export async function settleEnrolOperations(trx: Transaction<Database>, operationUuids: readonly string[], subjectStatus: keyof typeof enrolOperationStatus) {
  let changed = 0;
  // Chunked like the other bulk updates: one statement's parameter list stays small whatever the store holds.
  for (let i = 0; i < operationUuids.length; i += 500) {
    const result = await trx
      .updateTable('operations')
      .set({ status: enrolOperationStatus[subjectStatus] })
      .where('uuid', 'in', operationUuids.slice(i, i + 500))
      .where('type', '=', 'ENROLL')
      .where('status', '=', 'PENDING_ADJUDICATION')
      .executeTakeFirst();
    changed += Number(result.numUpdatedRows);
  }
  return changed;
}
