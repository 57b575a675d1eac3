import { sql, type RawBuilder } from 'kysely';

/**
 * The SQL of the user surface's ownership rule (services/ownership.ts says the rule and whose data a request
 * may see). Each fragment takes the column (or table alias) of the row it judges and the owner's account id;
 * other repositories receive it as a `condition` callback, so they need not know the rule. An account id of
 * `null` (a caller without an account) matches no row: `= null` is never true, which is the point.
 */

/** The operation row (its `account_id` column, e.g. `o.account_id`) was recorded for account `accountId`. */
export function operationOwnedBy(accountColumn: string, accountId: number | null): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(accountColumn)} = ${accountId}`;
}

/** The subject (its `enrollment_operation_uuid` column, e.g. `s.enrollment_operation_uuid`) was enrolled by account `accountId`. */
export function subjectOwnedBy(enrolmentColumn: string, accountId: number | null): RawBuilder<boolean> {
  return sql<boolean>`exists (select 1 from operations own_o where own_o.uuid = ${sql.ref(enrolmentColumn)} and own_o.account_id = ${accountId})`;
}

/**
 * The stored sample or image (table alias `alias`, with `subject_ref` and `operation_uuid`) is account
 * `accountId`'s: through its subject when it has one, else through the operation that stored it.
 */
export function sampleOwnedBy(alias: string, accountId: number | null): RawBuilder<boolean> {
  return sql<boolean>`(case when ${sql.ref(`${alias}.subject_ref`)} is not null
    then exists (select 1 from subjects own_s join operations own_o on own_o.uuid = own_s.enrollment_operation_uuid
                 where own_s.id = ${sql.ref(`${alias}.subject_ref`)} and own_o.account_id = ${accountId})
    else exists (select 1 from operations own_o where own_o.uuid = ${sql.ref(`${alias}.operation_uuid`)} and own_o.account_id = ${accountId})
    end)`;
}
