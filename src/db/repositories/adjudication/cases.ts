import { sql, type Selectable } from 'kysely';
import type { AdjudicationCasesTable } from '../../tables.js';
import { asDate, parsedJson } from '../decode.js';
import type { Queryable } from '../queryable.js';

/**
 * Rows of `adjudication_cases`. Both stores share the table: the pending store is every case PENDING or
 * CONFLICTED, the solved store is status SOLVED. Rows leave here decoded (candidates as a list, timestamps as
 * Dates). Locks are part of what each function says it does: the services decide which transaction they run in.
 */

export type CaseRow = Selectable<AdjudicationCasesTable>;
type CaseStore = 'pending' | 'solved';
export type Outcome = NonNullable<CaseRow['outcome']>;

const storeStatuses = { pending: ['PENDING', 'CONFLICTED'], solved: ['SOLVED'] } as const satisfies Record<
  CaseStore,
  readonly CaseRow['status'][]
>;
const dateOrNull = (value: Date | string | null) => (value === null ? null : asDate(value));

/** A case row with its candidates parsed and its timestamps Dates, whatever the driver gave. */
export function decodeCase(row: CaseRow): CaseRow {
  return {
    ...row,
    candidates: parsedJson(row.candidates),
    assigned_at: dateOrNull(row.assigned_at),
    lease_expires_at: dateOrNull(row.lease_expires_at),
    solved_at: dateOrNull(row.solved_at),
    created_at: asDate(row.created_at),
  };
}

/** A case of one store by id, or undefined when the id is unknown or the case is in the other store. */
export async function findCaseInStore(db: Queryable, id: number, store: CaseStore): Promise<CaseRow | undefined> {
  const row = await db
    .selectFrom('adjudication_cases')
    .selectAll()
    .where('id', '=', id)
    .where('status', 'in', [...storeStatuses[store]])
    .executeTakeFirst();
  return row && decodeCase(row);
}

/** Where a case stands, whichever store holds it. */
export function findCaseState(
  db: Queryable,
  id: number,
): Promise<Pick<CaseRow, 'id' | 'status' | 'outcome'> | undefined> {
  return db
    .selectFrom('adjudication_cases')
    .select(['id', 'status', 'outcome'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** A case by id, its row locked FOR UPDATE until the caller's transaction ends. */
export async function lockCase(trx: Queryable, id: number): Promise<CaseRow | undefined> {
  const row = await trx
    .selectFrom('adjudication_cases')
    .selectAll()
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  return row && decodeCase(row);
}

/** The PENDING case this account holds an unexpired lease on (the oldest assignment, should there be two). */
export async function findLeaseHeldBy(db: Queryable, accountId: number, now: Date): Promise<CaseRow | undefined> {
  const row = await db
    .selectFrom('adjudication_cases')
    .selectAll()
    .where('status', '=', 'PENDING')
    .where('assigned_to', '=', accountId)
    .where('lease_expires_at', '>', now)
    .orderBy('assigned_at')
    .limit(1)
    .executeTakeFirst();
  return row && decodeCase(row);
}

/**
 * Lock the oldest PENDING case that is unassigned or whose lease ran out, on which this account has not decided,
 * and that no other transaction holds: `SELECT id ... ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`.
 * PostgreSQL re-checks the WHERE on a row another transaction leased and committed meanwhile, which then no
 * longer qualifies. Answers its id; the lease itself is {@link leaseCase}, a second statement on purpose (see
 * services/adjudication/oncoming.ts).
 */
export async function lockNextOpenCaseFor(trx: Queryable, accountId: number, now: Date): Promise<number | undefined> {
  const next = await trx
    .selectFrom('adjudication_cases as c')
    .select('c.id')
    .where('c.status', '=', 'PENDING')
    .where((eb) =>
      eb.or([
        eb('c.assigned_to', 'is', null),
        eb('c.lease_expires_at', 'is', null),
        eb('c.lease_expires_at', '<=', now),
      ]),
    )
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('adjudication_decisions as d')
            .select(sql`1`.as('one'))
            .whereRef('d.case_id', '=', 'c.id')
            .where('d.account_id', '=', accountId),
        ),
      ),
    )
    .orderBy('c.created_at')
    .orderBy('c.id')
    .limit(1)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
  return next?.id;
}

/** Assign a case to an account until `expiresAt`; answers the leased row. */
export async function leaseCase(
  trx: Queryable,
  id: number,
  accountId: number,
  now: Date,
  expiresAt: Date,
): Promise<CaseRow> {
  const row = await trx
    .updateTable('adjudication_cases')
    .set({ assigned_to: accountId, assigned_at: now, lease_expires_at: expiresAt })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return decodeCase(row);
}

/** Give a case its new open state and release its lease, so it goes back to the pool. */
export async function releaseCase(trx: Queryable, id: number, state: 'PENDING' | 'CONFLICTED'): Promise<void> {
  await trx
    .updateTable('adjudication_cases')
    .set({ status: state, assigned_to: null, assigned_at: null, lease_expires_at: null })
    .where('id', '=', id)
    .execute();
}

/** Close a case with its outcome; the last assignment stays visible, its lease ends. */
export async function markCaseSolved(trx: Queryable, id: number, outcome: Outcome, now: Date): Promise<void> {
  await trx
    .updateTable('adjudication_cases')
    .set({ status: 'SOLVED', outcome, solved_at: now, lease_expires_at: null })
    .where('id', '=', id)
    .execute();
}

/** Lock the cases of these ids that are in the solved store; answers the ids found. */
export async function lockSolvedCasesByIds(trx: Queryable, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await trx
    .selectFrom('adjudication_cases')
    .select('id')
    .where('id', 'in', [...ids])
    .where('status', '=', 'SOLVED')
    .forUpdate()
    .execute();
  return rows.map((r) => r.id);
}

/** Lock every case of a store; answers what clearing it needs of each (its probe and its ENROLL operation). */
export function lockCasesOfStore(
  trx: Queryable,
  store: CaseStore,
): Promise<Pick<CaseRow, 'id' | 'subject_id' | 'operation_uuid'>[]> {
  return trx
    .selectFrom('adjudication_cases')
    .select(['id', 'subject_id', 'operation_uuid'])
    .where('status', 'in', [...storeStatuses[store]])
    .forUpdate()
    .execute();
}

/** Delete these cases (their decisions go with them: the foreign key cascades); answers how many went. */
export async function deleteCasesByIds(trx: Queryable, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await trx
    .deleteFrom('adjudication_cases')
    .where('id', 'in', [...ids])
    .executeTakeFirstOrThrow();
  return Number(result.numDeletedRows);
}

/** Delete every case of a store, decisions cascading; answers how many went. */
export async function deleteCasesOfStore(trx: Queryable, store: CaseStore): Promise<number> {
  const result = await trx
    .deleteFrom('adjudication_cases')
    .where('status', 'in', [...storeStatuses[store]])
    .executeTakeFirstOrThrow();
  return Number(result.numDeletedRows);
}
