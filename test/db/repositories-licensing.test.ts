// The licensing repository over both dialects: a stored licence's installation time comes back as a Date and
// the newest active licence of a source is the one found; concurrent increments of one usage counter each see
// a distinct count and none is lost; the usage report sums over licences as numbers, one kind of period only.
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/tables.js';
import {
  deactivateLicencesOfSourceExcept,
  findActiveLicence,
  findLicenceById,
  findUsageCount,
  incrementUsageCounters,
  listUsageCountersOfLicence,
  sumUsageByPeriod,
  upsertActiveLicence,
} from '../../src/db/repositories/licensing.js';
import { dialects } from '../support/databases.js';
import { openMigratedDatabase } from '../support/migrated-database.js';

/** The service counts several periods at once (usage.ts); one counter is a list of one period. */
const one = (c: { period: string; operationType: string; licenceId: string }) => ({ ...c, periods: [c.period] });

const t0 = new Date('2026-09-10T11:12:13.456Z');
const later = (ms: number) => new Date(t0.getTime() + ms);

for (const dialect of dialects) {
  describe(`licensing repository on ${dialect}`, () => {
    let db: Kysely<Database>;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ db, close } = await openMigratedDatabase(dialect));
    }, 120_000);
    afterAll(async () => close?.());

    it('finds the newest active licence of a source, its installation time a Date', async () => {
      await upsertActiveLicence(db, { id: 'L1', source: 'INTERNET', document: 'jws-1', installed_at: t0 });
      await upsertActiveLicence(db, { id: 'L2', source: 'INTERNET', document: 'jws-2', installed_at: later(1000) });
      await upsertActiveLicence(db, { id: 'C1', source: 'CLOUD', document: 'jws-c', installed_at: later(5000) });
      const newest = await findActiveLicence(db, 'INTERNET');
      expect(newest).toMatchObject({ id: 'L2', document: 'jws-2', active: true });
      expect(newest?.installed_at).toBeInstanceOf(Date);
      expect(newest?.installed_at.toISOString()).toBe(later(1000).toISOString());
      // L1 again, as the one in force: L2 is retired, L1's document replaced, its installation time kept.
      await db.transaction().execute(async (trx) => {
        await deactivateLicencesOfSourceExcept(trx, 'INTERNET', 'L1');
        await upsertActiveLicence(trx, { id: 'L1', source: 'INTERNET', document: 'jws-1b', installed_at: later(9000) });
      });
      expect(await findActiveLicence(db, 'INTERNET')).toMatchObject({ id: 'L1', document: 'jws-1b' });
      expect((await findLicenceById(db, 'L1'))?.installed_at.toISOString()).toBe(t0.toISOString());
      expect((await findActiveLicence(db, 'CLOUD'))?.id).toBe('C1');
      expect(await findActiveLicence(db, 'DONGLE')).toBeUndefined();
    });

    it('counts concurrent increments of one counter exactly, each transaction seeing its own count', async () => {
      const counter = { period: 'DAY:2026-09-10', operationType: 'ENROLL', licenceId: 'L1' };
      const seen = await Promise.all(
        Array.from({ length: 8 }, () =>
          db
            .transaction()
            .execute(async (trx) => (await incrementUsageCounters(trx, one(counter))).get(counter.period)!),
        ),
      );
      expect(seen.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(await findUsageCount(db, counter)).toBe(8);
      expect(await findUsageCount(db, { ...counter, licenceId: 'other' })).toBeUndefined();
    });

    it('sums a kind of period over licences, as numbers, by period then operation', async () => {
      await incrementUsageCounters(db, one({ period: 'DAY:2026-09-10', operationType: 'ENROLL', licenceId: 'L2' }));
      await incrementUsageCounters(db, one({ period: 'DAY:2026-09-09', operationType: 'VERIFY', licenceId: 'L1' }));
      await incrementUsageCounters(db, one({ period: 'MONTH:2026-09', operationType: 'ENROLL', licenceId: 'L1' }));
      expect(await sumUsageByPeriod(db, 'DAY')).toEqual([
        { period: 'DAY:2026-09-09', operation_type: 'VERIFY', count: 1 },
        { period: 'DAY:2026-09-10', operation_type: 'ENROLL', count: 9 },
      ]);
      expect(await sumUsageByPeriod(db, 'DAY', 'VERIFY')).toEqual([
        { period: 'DAY:2026-09-09', operation_type: 'VERIFY', count: 1 },
      ]);
      expect(await sumUsageByPeriod(db, 'MONTH')).toEqual([
        { period: 'MONTH:2026-09', operation_type: 'ENROLL', count: 1 },
      ]);
      expect(
        (await listUsageCountersOfLicence(db, 'L1')).map((r) => `${r.period} ${r.operation_type} ${r.count}`),
      ).toEqual(['DAY:2026-09-09 VERIFY 1', 'DAY:2026-09-10 ENROLL 8', 'MONTH:2026-09 ENROLL 1']);
    });
  });
}
