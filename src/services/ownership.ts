import type { RawBuilder } from 'kysely';
import type { Principal } from './auth/principal.js';
import type { Surface } from '../auth/roles.js';
import { operationOwnedBy, sampleOwnedBy, subjectOwnedBy } from '../db/repositories/ownership.js';

/**
 * The one ownership rule of the user surface (domain.md, "Surfaces, credentials, scopes"). A /user caller may
 * verify against and identify over the whole gallery, but what it reads in detail, enumerates or destroys is
 * what its account recorded:
 * - an operation is the caller's when the operation row names the caller's account (`operations.account_id`);
 * - a subject is the caller's when its enrolment operation (`subjects.enrollment_operation_uuid`) is;
 * - a stored sample or image (`images`, `face_samples`, `voice_samples`) is the caller's when the subject it
 *   belongs to is, or, belonging to no subject (a probe), when the operation that stored it is.
 * Anything else answers as if it did not exist (404, or left out of a list), so its existence is not
 * disclosed either. A caller without an account (an OAuth client acting for itself) owns nothing: the rows
 * it records name no account and cannot be told apart from another client's. ADMIN and root surfaces are not
 * limited. One rule for every caller of the surface, ADMIN accounts included: on /user they see their own.
 */

/** Whose data a request may see: an account, or everything (`null`, the ADMIN surfaces). */
export type Owner = { accountId: number | null } | null;

/** The owner a request is limited to: the caller's account on the user surface, nobody's limit elsewhere. */
export function ownerOf(caller: { surface: Surface; principal: Principal }): Owner {
  return caller.surface === 'user' ? { accountId: caller.principal.accountId } : null;
}

/** A caller without an account matches no row: `= null` is never true, which is the point. */
const accountOf = (owner: NonNullable<Owner>) => owner.accountId;

/** The operation row (its `account_id` column, e.g. `o.account_id`) was recorded for the owner's account. */
export function ownsOperation(accountColumn: string, owner: NonNullable<Owner>): RawBuilder<boolean> {
  return operationOwnedBy(accountColumn, accountOf(owner));
}

/** The subject (its `enrollment_operation_uuid` column, e.g. `s.enrollment_operation_uuid`) was enrolled by the owner's account. */
export function ownsSubject(enrolmentColumn: string, owner: NonNullable<Owner>): RawBuilder<boolean> {
  return subjectOwnedBy(enrolmentColumn, accountOf(owner));
}

/**
 * The stored sample or image (table alias `alias`, with `subject_ref` and `operation_uuid`) is the owner's:
 * through its subject when it has one, else through the operation that stored it.
 */
export function ownsSample(alias: string, owner: NonNullable<Owner>): RawBuilder<boolean> {
  return sampleOwnedBy(alias, accountOf(owner));
}

/** Who a destructive call acted for, as its log line names it. */
export function actor(caller: { surface: Surface; principal: Principal }) {
  return { accountId: caller.principal.accountId, username: caller.principal.username, surface: caller.surface };
}
