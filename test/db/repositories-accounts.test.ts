// The accounts repository over both dialects: timestamps come back as Dates, a taken user name inserts
// nothing, a change that ends tokens raises the credential version, the list matches a literal prefix and
// breaks ties by id ascending whatever the direction, and the "another enabled ADMIN" rule sees the right rows.
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/tables.js';
import {
  accountNameTaken,
  anotherEnabledAdminExists,
  anyAdminExists,
  countAccountsMatching,
  deleteAccountsByIds,
  findAccountForLogin,
  insertAccountUnlessNameTaken,
  listAccountsPage,
  lockAccount,
  updateAccount,
} from '../../src/db/repositories/accounts.js';
import { dialects } from '../support/databases.js';
import { openMigratedDatabase } from '../support/migrated-database.js';

const t0 = new Date('2026-02-03T04:05:06.789Z');

for (const dialect of dialects) {
  describe(`accounts repository on ${dialect}`, () => {
    let db: Kysely<Database>;
    let close: () => Promise<void>;
    const ids: Record<string, number> = {};
    beforeAll(async () => {
      ({ db, close } = await openMigratedDatabase(dialect));
      expect(await anyAdminExists(db)).toBe(false);
      // Same role for the three op_ accounts: sorting by role falls back to ids ascending.
      for (const [username, role] of [
        ['op_b', 'USER'],
        ['op_a', 'USER'],
        ['opXc', 'USER'],
        ['root', 'ADMIN'],
      ] as const) {
        const row = await insertAccountUnlessNameTaken(db, {
          username,
          password_hash: `hash-${username}`,
          role,
          created_at: t0,
          updated_at: t0,
        });
        ids[username] = row!.id;
      }
    }, 120_000);
    afterAll(async () => close?.());

    it('gives timestamps as Dates and inserts nothing for a taken name', async () => {
      const locked = await db.transaction().execute((trx) => lockAccount(trx, { username: 'op_a' }));
      expect(locked?.created_at).toBeInstanceOf(Date);
      expect(locked?.created_at.toISOString()).toBe(t0.toISOString());
      expect(locked).toMatchObject({ id: ids.op_a, enabled: true, credential_version: 1 });
      expect(
        await insertAccountUnlessNameTaken(db, {
          username: 'op_a',
          password_hash: 'other',
          role: 'ADMIN',
          created_at: t0,
          updated_at: t0,
        }),
      ).toBeUndefined();
      expect((await findAccountForLogin(db, 'op_a'))?.password_hash).toBe('hash-op_a');
      expect(await accountNameTaken(db, 'op_a')).toBe(true);
      expect(await accountNameTaken(db, 'nobody')).toBe(false);
    });

    it('raises the credential version only for a change that ends tokens', async () => {
      const renamed = await updateAccount(
        db,
        ids.opXc!,
        { username: 'op_c', updated_at: new Date(t0.getTime() + 1000) },
        false,
      );
      expect(renamed).toMatchObject({ username: 'op_c', credential_version: 1 });
      expect(renamed.updated_at.toISOString()).toBe(new Date(t0.getTime() + 1000).toISOString());
      const disabled = await updateAccount(db, ids.opXc!, { enabled: false, updated_at: t0 }, true);
      expect(disabled).toMatchObject({ enabled: false, credential_version: 2 });
      await updateAccount(db, ids.opXc!, { enabled: true, updated_at: t0 }, true);
    });

    it('lists a literal prefix (_ is no wildcard), sorted, ties by id ascending, and counts the same rows', async () => {
      const page = (direction: 'asc' | 'desc', index: number) =>
        listAccountsPage(db, { usernamePrefix: 'op_' }, { column: 'role', direction }, { page: index, size: 2 });
      expect((await page('desc', 0)).map((r) => r.username)).toEqual(['op_b', 'op_a']);
      expect((await page('desc', 1)).map((r) => r.username)).toEqual(['op_c']);
      const byName = await listAccountsPage(db, {}, { column: 'username', direction: 'desc' }, { page: 0, size: 10 });
      expect(byName.map((r) => r.username)).toEqual(['root', 'op_c', 'op_b', 'op_a']);
      expect(byName[0]!.created_at).toBeInstanceOf(Date);
      expect(await countAccountsMatching(db, { usernamePrefix: 'op_' })).toBe(3);
      expect(await countAccountsMatching(db, { role: 'ADMIN', enabled: true })).toBe(1);
      await updateAccount(db, ids.op_a!, { username: 'opXa', updated_at: t0 }, false);
      expect(await countAccountsMatching(db, { usernamePrefix: 'op_' })).toBe(2);
    });

    it('finds another enabled ADMIN only outside the excluded accounts', async () => {
      expect(await anyAdminExists(db)).toBe(true);
      expect(await anotherEnabledAdminExists(db, [ids.op_b!])).toBe(true);
      expect(await anotherEnabledAdminExists(db, [ids.root!])).toBe(false);
      await deleteAccountsByIds(db, [ids.op_b!, ids.opXc!]);
      expect(await countAccountsMatching(db, {})).toBe(2);
    });
  });
}
