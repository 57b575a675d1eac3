import { sql, type Selectable } from 'kysely';
import type { Database } from '../../tables.js';
import { asDate } from '../decode.js';
import type { Queryable } from '../queryable.js';

/** Failed logins per (subject, address) (table `login_throttle`; the policy lives in auth/throttle.ts). */

type LoginThrottleRow = Selectable<Database['login_throttle']>;

/** The rows of an address for these subjects, expired ones included. */
export async function findThrottleRows(
  db: Queryable,
  address: string,
  subjects: string[],
): Promise<Pick<LoginThrottleRow, 'subject' | 'failures' | 'last_failure_at' | 'expires_at'>[]> {
  const rows = await db
    .selectFrom('login_throttle')
    .select(['subject', 'failures', 'last_failure_at', 'expires_at'])
    .where('address', '=', address)
    .where('subject', 'in', subjects)
    .execute();
  return rows.map((row) => ({
    ...row,
    last_failure_at: asDate(row.last_failure_at),
    expires_at: asDate(row.expires_at),
  }));
}

/**
 * Count one failure in each of these rows of an address, in one statement (each created at 1 if missing).
 * A row past its expiry starts again at 1. Each row's memory slides to `expiresAt` with the failure, except
 * the row of `fixedWindowSubject`, whose window stays fixed from its first failure until it expires.
 */
export async function countThrottleFailures(
  db: Queryable,
  address: string,
  at: Date,
  rows: { subject: string; expiresAt: Date }[],
  fixedWindowSubject: string,
): Promise<void> {
  const expired = sql<boolean>`login_throttle.expires_at <= ${at}`;
  await db
    .insertInto('login_throttle')
    .values(
      rows.map((r) => ({
        address,
        subject: r.subject,
        failures: 1,
        first_failure_at: at,
        last_failure_at: at,
        expires_at: r.expiresAt,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['address', 'subject']).doUpdateSet({
        failures: sql<number>`case when ${expired} then 1 else login_throttle.failures + 1 end`,
        first_failure_at: sql<Date>`case when ${expired} then excluded.first_failure_at else login_throttle.first_failure_at end`,
        last_failure_at: sql<Date>`excluded.last_failure_at`,
        expires_at: sql<Date>`case when ${expired} or login_throttle.subject <> ${fixedWindowSubject} then excluded.expires_at else login_throttle.expires_at end`,
      }),
    )
    .execute();
}

export async function deleteThrottleRow(db: Queryable, address: string, subject: string): Promise<void> {
  await db.deleteFrom('login_throttle').where('address', '=', address).where('subject', '=', subject).execute();
}

/** Every row of an address. */
export async function deleteThrottleRowsOfAddress(db: Queryable, address: string): Promise<void> {
  await db.deleteFrom('login_throttle').where('address', '=', address).execute();
}

export async function deleteThrottleRowsExpiredBefore(db: Queryable, before: Date): Promise<void> {
  await db.deleteFrom('login_throttle').where('expires_at', '<', before).execute();
}
