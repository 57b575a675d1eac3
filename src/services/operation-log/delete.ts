import {
  deleteOperationsWithProbes,
  findSubjectsDependingOnOperations,
  lockOperationsByUuids,
} from '../../db/repositories/operation-log.js';
import type { Queryable } from '../../db/repositories/queryable.js';
import type { ServiceContext } from '../context.js';
import { DomainError } from '../errors.js';

/**
 * Deleting entries of the operation log (seed 4.10: `deleteOperation`, `deleteOperations`).
 *
 * An operation is removed with what only it owns: the probe data stored under its UUID that belongs to no
 * subject (images, face and voice samples with `subject_ref` null, e.g. a verification's probe image).
 * A subject's data is never removed here. An operation whose UUID a stored subject still depends on (its
 * enrolment, `enrollmentOperationUuid`, or any image or sample of the subject stored under that UUID) is
 * refused with 409 naming the subject: deleting it would leave the subject pointing at nothing, and deleting
 * the subject's samples with it would silently change what the gallery matches. `deleteSubject` is the way to
 * remove such an operation, together with its subject.
 *
 * A list is all or nothing: unknown UUIDs are one 404 naming every one of them, a protected one is one 409,
 * and nothing is removed in either case. Adjudication cases are left alone: an open case always has its probe
 * subject (so its operation is protected), and solved cases stay as the audit of what was decided, as they do
 * when a subject is deleted.
 */

/** `deleteOperation`: one operation by UUID; 404 when unknown. */
export function deleteOperation(ctx: ServiceContext, uuid: string) {
  return deleteOperations(ctx, [uuid]);
}

/** `deleteOperations`: every named operation, or none; answers how many were deleted. */
export async function deleteOperations(ctx: ServiceContext, uuids: readonly string[]): Promise<{ deleted: number }> {
  // PostgreSQL compares uuids case-insensitively; name the missing ones as the client spelled them.
  const asGiven = new Map(uuids.map((u) => [u.toLowerCase(), u]));
  const list = [...asGiven.keys()];
  const deleted = await ctx.db.transaction().execute(async (trx) => {
    const known = new Set((await lockOperationsByUuids(trx, list)).map((uuid) => uuid.toLowerCase()));
    const missing = list.filter((u) => !known.has(u)).map((u) => asGiven.get(u)!);
    if (missing.length) {
      throw new DomainError(
        'not-found',
        `Operation${missing.length > 1 ? 's' : ''} ${missing.join(', ')} ${missing.length > 1 ? 'were' : 'was'} not found`,
        {
          missing,
        },
      );
    }
    await refuseSubjectOperations(trx, list);
    // With the probe data only these operations own; a subject's data never goes here.
    return deleteOperationsWithProbes(trx, list);
  });
  ctx.log.info('operations deleted', { count: deleted });
  return { deleted };
}

/** 409 when a stored subject depends on one of these operations, naming each such operation with its subjects. */
async function refuseSubjectOperations(trx: Queryable, list: string[]) {
  const rows = await findSubjectsDependingOnOperations(trx, list);
  if (!rows.length) return;
  const bySubject = new Map<string, Set<string>>();
  for (const row of rows) {
    const uuid = row.uuid.toLowerCase();
    bySubject.set(uuid, (bySubject.get(uuid) ?? new Set()).add(row.subject_id));
  }
  const named = [...bySubject].map(
    ([uuid, subjects]) => `${uuid} (subject ${[...subjects].map((s) => `'${s}'`).join(', ')})`,
  );
  throw new DomainError(
    'conflict',
    `Operation${named.length > 1 ? 's' : ''} ${named.join(', ')} ${named.length > 1 ? 'hold' : 'holds'} the enrolment or samples of a stored subject; delete the subject instead`,
    { operations: [...bySubject].map(([uuid, subjects]) => ({ uuid, subjectIds: [...subjects] })) },
  );
}
