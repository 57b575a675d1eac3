import { sql, type Selectable } from 'kysely';
import type { Database } from '../tables.js';
import { asDate } from './decode.js';
import { likePrefix } from './like.js';
import type { Queryable } from './queryable.js';

/**
 * Licences kept by the service (table `licences`: the activated INTERNET licence, the last good CLOUD one) and
 * the usage counters of licensed operations (table `usage_counters`, one row per period key, operation type
 * and licence).
 */

type LicenceRow = Selectable<Database['licences']>;
type LicenceSource = LicenceRow['source'];

/** The licence in force for a source: its newest active row. */
export async function findActiveLicence(db: Queryable, source: LicenceSource): Promise<LicenceRow | undefined> {
  const row = await db
    .selectFrom('licences')
    .selectAll()
    .where('source', '=', source)
    .where('active', '=', true)
    .orderBy('installed_at', 'desc')
    .executeTakeFirst();
  return row && { ...row, installed_at: asDate(row.installed_at) };
}

/** A stored licence's document and installation time, by licence id. */
export async function findLicenceById(
  db: Queryable,
  id: string,
): Promise<Pick<LicenceRow, 'document' | 'installed_at'> | undefined> {
  const row = await db
    .selectFrom('licences')
    .select(['installed_at', 'document'])
    .where('id', '=', id)
    .executeTakeFirst();
  return row && { ...row, installed_at: asDate(row.installed_at) };
}

/** Retire every licence of a source but one. */
export async function deactivateLicencesOfSourceExcept(
  db: Queryable,
  source: LicenceSource,
  keptId: string,
): Promise<void> {
  await db
    .updateTable('licences')
    .set({ active: false })
    .where('source', '=', source)
    .where('id', '!=', keptId)
    .execute();
}

/** Store a licence as active: inserted, or (same id) its document replaced and made active again. */
export async function upsertActiveLicence(
  db: Queryable,
  licence: { id: string; source: LicenceSource; document: string; installed_at: Date },
): Promise<void> {
  await db
    .insertInto('licences')
    .values({ ...licence, active: true })
    .onConflict((oc) => oc.column('id').doUpdateSet({ document: licence.document, active: true }))
    .execute();
}

/** Every counter of one licence, by period key then operation type. */
export async function listUsageCountersOfLicence(
  db: Queryable,
  licenceId: string,
): Promise<{ period: string; operation_type: string; count: number }[]> {
  return db
    .selectFrom('usage_counters')
    .select(['period', 'operation_type', 'count'])
    .where('licence_id', '=', licenceId)
    .orderBy('period')
    .orderBy('operation_type')
    .execute();
}

/**
 * The counts of every period of one kind (`DAY` or `MONTH` keys), summed over licences, per period key and
 * operation type, in that order; optionally of one operation type only.
 */
export async function sumUsageByPeriod(
  db: Queryable,
  kind: 'DAY' | 'MONTH',
  operationType?: string,
): Promise<{ period: string; operation_type: string; count: number }[]> {
  let select = db
    .selectFrom('usage_counters')
    .select(['period', 'operation_type', (eb) => eb.fn.sum<number>('count').as('count')])
    .where('period', 'like', likePrefix(`${kind}:`))
    .groupBy(['period', 'operation_type'])
    .orderBy('period')
    .orderBy('operation_type');
  if (operationType) select = select.where('operation_type', '=', operationType);
  // sum() of integers is numeric: text from one driver, a number from the other.
  return (await select.execute()).map((row) => ({ ...row, count: Number(row.count) }));
}

/** One counter's value; undefined when nothing has been counted in it. */
export async function findUsageCount(
  db: Queryable,
  counter: { period: string; operationType: string; licenceId: string },
): Promise<number | undefined> {
  const row = await db
    .selectFrom('usage_counters')
    .select('count')
    .where('period', '=', counter.period)
    .where('operation_type', '=', counter.operationType)
    .where('licence_id', '=', counter.licenceId)
    .executeTakeFirst();
  return row?.count;
}

/**
 * Add one to several counters of the same operation type and licence (one per period key) in one atomic
 * upsert, and answer their new values by period key. The rows are taken in the order given, as separate
 * upserts would take them, so transactions that give the same order cannot deadlock on them.
 */
export async function incrementUsageCounters(
  db: Queryable,
  counters: { periods: readonly string[]; operationType: string; licenceId: string },
): Promise<Map<string, number>> {
  const rows = await db
    .insertInto('usage_counters')
    .values(
      counters.periods.map((period) => ({
        period,
        operation_type: counters.operationType,
        licence_id: counters.licenceId,
        count: 1,
      })),
    )
    .onConflict((oc) =>
      oc
        .columns(['period', 'operation_type', 'licence_id'])
        .doUpdateSet({ count: sql<number>`usage_counters.count + 1` }),
    )
    .returning(['period', 'count'])
    .execute();
  return new Map(rows.map((r) => [r.period, r.count]));
}
