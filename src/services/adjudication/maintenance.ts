import type { ServiceContext } from '../context.js';
import { DomainError } from '../errors.js';
import { settleEnrolOperations } from './enrol-operation.js';

/**
 * Housekeeping of the two stores. Decisions go with their cases (the FK cascades; they are counted first so
 * the answer says how many went).
 */

const n = (result: { numDeletedRows: bigint } | { numUpdatedRows: bigint }) =>
  Number('numDeletedRows' in result ? result.numDeletedRows : result.numUpdatedRows);

async function decisionCount(ctx: ServiceContext | { db: ServiceContext['db'] }, caseIds: readonly number[]) {
  if (caseIds.length === 0) return 0;
  const row = await ctx.db
    .selectFrom('adjudication_decisions')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('case_id', 'in', [...caseIds])
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * `deleteAdjudicationsSolved`: all or nothing. An id that is unknown or names a case still in the pending
 * store is missing from the solved store: 404 naming every such id, and nothing is deleted.
 */
export async function deleteSolved(ctx: ServiceContext, ids: readonly number[]) {
  const unique = [...new Set(ids)];
  return ctx.db.transaction().execute(async (trx) => {
    const rows = await trx.selectFrom('adjudication_cases').select('id').where('id', 'in', unique).where('status', '=', 'SOLVED').forUpdate().execute();
    const found = new Set(rows.map((r) => r.id));
    const missing = unique.filter((id) => !found.has(id));
    if (missing.length) {
      throw new DomainError('not-found', `Solved adjudication cases ${missing.join(', ')} were not found`, { missing });
    }
    const deleted = n(await trx.deleteFrom('adjudication_cases').where('id', 'in', unique).executeTakeFirstOrThrow());
    return { deleted };
  });
}

/** `clearAdjudicationSolvedDb`: empty the solved store with its decisions; probe subjects keep their final status. */
export async function clearSolved(ctx: ServiceContext) {
  return ctx.db.transaction().execute(async (trx) => {
    const ids = (await trx.selectFrom('adjudication_cases').select('id').where('status', '=', 'SOLVED').forUpdate().execute()).map((r) => r.id);
    const decisionsDeleted = await decisionCount({ db: trx }, ids);
    const deleted = n(await trx.deleteFrom('adjudication_cases').where('status', '=', 'SOLVED').executeTakeFirstOrThrow());
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
    const rows = await trx
      .selectFrom('adjudication_cases')
      .select(['id', 'subject_id', 'operation_uuid'])
      .where('status', 'in', ['PENDING', 'CONFLICTED'])
      .forUpdate()
      .execute();
    const decisionsDeleted = await decisionCount({ db: trx }, rows.map((r) => r.id));
    const deleted = n(await trx.deleteFrom('adjudication_cases').where('status', 'in', ['PENDING', 'CONFLICTED']).executeTakeFirstOrThrow());
    const subjectIds = [...new Set(rows.map((r) => r.subject_id))];
    let subjectsRejected = 0;
    for (let i = 0; i < subjectIds.length; i += 500) {
      subjectsRejected += n(
        await trx
          .updateTable('subjects')
          .set({ status: 'REJECTED', updated_at: now })
          .where('subject_id', 'in', subjectIds.slice(i, i + 500))
          .where('status', '=', 'PENDING_ADJUDICATION')
          .executeTakeFirstOrThrow(),
      );
    }
    // Their ENROLL operations stop saying PENDING_ADJUDICATION too: the enrolment ended REJECTED.
    await settleEnrolOperations(trx, rows.map((r) => r.operation_uuid), 'REJECTED');
    ctx.log.info('pending adjudication store cleared', { deleted, subjectsRejected });
    return { deleted, decisionsDeleted, subjectsRejected };
  });
}
