// The settings repository over both dialects: jsonb values of every shape come back as values (never their
// JSON text) and update times as Dates; an upsert replaces; the write lock makes a second writer wait for the
// first one's commit and see what it wrote.
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/tables.js';
import {
  deleteAllSettings,
  deleteSetting,
  findSettingValue,
  listSettingOverrides,
  lockSettingsWrites,
  upsertSetting,
} from '../../src/db/repositories/settings.js';
import { dialects } from '../support/databases.js';
import { openMigratedDatabase } from '../support/migrated-database.js';

const t0 = new Date('2026-08-09T10:11:12.345Z');

for (const dialect of dialects) {
  describe(`settings repository on ${dialect}`, () => {
    let db: Kysely<Database>;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ db, close } = await openMigratedDatabase(dialect));
    }, 120_000);
    afterAll(async () => close?.());

    it('stores numbers, strings, booleans, lists and objects and reads them back as such, with Date times', async () => {
      const values: Record<string, unknown> = {
        n: 48.5,
        s: '48',
        b: false,
        l: ['FACE', 'VOICE'],
        o: { a: { b: [1, null] } },
      };
      for (const [key, value] of Object.entries(values)) await upsertSetting(db, key, value, t0);
      await upsertSetting(db, 'n', 52, new Date(t0.getTime() + 1000));
      const rows = Object.fromEntries((await listSettingOverrides(db)).map((r) => [r.key, r]));
      expect(Object.fromEntries(Object.entries(rows).map(([k, r]) => [k, r.value]))).toEqual({ ...values, n: 52 });
      expect(rows.n!.updated_at).toBeInstanceOf(Date);
      expect(rows.n!.updated_at.toISOString()).toBe(new Date(t0.getTime() + 1000).toISOString());
      expect(await findSettingValue(db, 's')).toEqual({ value: '48' });
      expect(await findSettingValue(db, 'missing')).toBeUndefined();
      await deleteSetting(db, 's');
      expect(await findSettingValue(db, 's')).toBeUndefined();
      expect(await deleteAllSettings(db)).toBe(4);
      expect(await listSettingOverrides(db)).toEqual([]);
    });

    it('makes a second writer wait for the first one under the lock, then see its value', async () => {
      let locked!: () => void;
      const firstHoldsLock = new Promise<void>((resolve) => (locked = resolve));
      const first = db.transaction().execute(async (trx) => {
        await lockSettingsWrites(trx);
        locked();
        await new Promise((resolve) => setTimeout(resolve, 300));
        await upsertSetting(trx, 'low', 10, t0);
      });
      await firstHoldsLock;
      const seen = await db.transaction().execute(async (trx) => {
        await lockSettingsWrites(trx);
        return findSettingValue(trx, 'low');
      });
      await first;
      expect(seen).toEqual({ value: 10 });
    });
  });
}
