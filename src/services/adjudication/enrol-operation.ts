import { settlePendingEnrolOperations } from '../../db/repositories/adjudication/related.js';
import type { Queryable } from '../../db/repositories/queryable.js';
import type { OperationStatus } from '../operation-log/record.js';

/**
 * The ENROLL operation that opened a case says PENDING_ADJUDICATION only while the case is pending: once the
 * probe subject gets its final status, the operation's status follows it, the way enrolment would have
 * recorded it had the answer been known then (ENROLLED -> SUCCESS, REJECTED -> DUPLICATE_FOUND). Without
 * this the log kept reporting a wait that had ended, and a reader of the operation could not tell how it went.
 */

/** What the operation says once its probe subject is ENROLLED or REJECTED. */
const enrolOperationStatus = {
  ENROLLED: 'SUCCESS',
  REJECTED: 'DUPLICATE_FOUND',
} as const satisfies Record<'ENROLLED' | 'REJECTED', OperationStatus>;

/**
 * Give the ENROLL operations of these cases (by operation UUID) the status of their probe's final status, in
 * the transaction that settles the cases. Only operations still PENDING_ADJUDICATION change, so a row some
 * other path already finished is left as it is.
 */
export function settleEnrolOperations(
  trx: Queryable,
  operationUuids: readonly string[],
  subjectStatus: keyof typeof enrolOperationStatus,
): Promise<number> {
  return settlePendingEnrolOperations(trx, operationUuids, enrolOperationStatus[subjectStatus]);
}
