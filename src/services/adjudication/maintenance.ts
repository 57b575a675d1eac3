import {
  deleteCasesByIds,
  deleteCasesOfStore,
  lockCasesOfStore,
  lockSolvedCasesByIds,
} from '../../db/repositories/adjudication/cases.js';
import { countDecisionsOfCases } from '../../db/repositories/adjudication/decisions.js';
import { rejectPendingSubjects } from '../../db/repositories/adjudication/related.js';
import type { ServiceContext } from '../context.js';
import { DomainError } from '../errors.js';
import { settleEnrolOperations } from './enrol-operation.js';

/**
 * Housekeeping of the two stores. Decisions go with their cases (the FK cascades; they are counted first so
 * the answer says how many went).
 */

/**
 * `deleteAdjudicationsSolved`: all or nothing. An id that is unknown or names a case still in the pending
 * store is missing from the solved store: 404 naming every such id, and nothing is deleted.
 */
export async function deleteSolved(ctx: ServiceContext, ids: readonly number[]) {
  const unique = [...new Set(ids)];
  return ctx.db.transaction().execute(async (trx) => {
    const found = new Set(await lockSolvedCasesByIds(trx, unique));
    const missing = unique.filter((id) => !found.has(id));
    if (missing.length) {
      throw new DomainError('not-found', `Solved adjudication cases ${missing.join(', ')} were not found`, { missing });
    }
    const deleted = await deleteCasesByIds(trx, unique);
    return { deleted };
  });
}

/** `clearAdjudicationSolvedDb`: empty the solved store with its decisions; probe subjects keep their final status. */
export async function clearSolved(ctx: ServiceContext) {
  return ctx.db.transaction().execute(async (trx) => {
    const ids = (await lockCasesOfStore(trx, 'solved')).map((r) => r.id);
    const decisionsDeleted = await countDecisionsOfCases(trx, ids);
    const deleted = await deleteCasesOfStore(trx, 'solved');
    return { deleted, decisionsDeleted, subjectsRejected: 0 };
  });
}

/**
 * `clearAdjudicationsPendingDb`: empty the pending store (PENDING and CONFLICTED cases) with their decisions.
 * A PENDING_ADJUDICATION subject without a case could never leave that status, so in the same transaction
 * their probe subjects become REJECTED (no human accepted them; their samples stay, and a REJECTED subject
 * is never matched against), and their ENROLL operations DUPLICATE_FOUND. The answer counts the subjects.
 */
export async function clearPending(ctx: ServiceContext) {
  return ctx.db.transaction().execute(async (trx) => {
    const now = ctx.now();
    const rows = await lockCasesOfStore(trx, 'pending');
    const decisionsDeleted = await countDecisionsOfCases(
      trx,
      rows.map((r) => r.id),
    );
    const deleted = await deleteCasesOfStore(trx, 'pending');
    const subjectsRejected = await rejectPendingSubjects(trx, [...new Set(rows.map((r) => r.subject_id))], now);
    // Their ENROLL operations stop saying PENDING_ADJUDICATION too: the enrolment ended REJECTED.
    await settleEnrolOperations(
      trx,
      rows.map((r) => r.operation_uuid),
      'REJECTED',
    );
    ctx.log.info('pending adjudication store cleared', { deleted, subjectsRejected });
    return { deleted, decisionsDeleted, subjectsRejected };
  });
}
