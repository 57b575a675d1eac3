// The exception log's repository over both dialects: timestamps come back as Dates (clamped into the API's
// range), pages are ordered with ties broken by id ascending, the path filter is a literal prefix, and an
// import skips ids already stored.
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/tables.js';
import {
  countExceptions,
  deleteAllExceptions,
  findExceptionById,
  findExceptionPage,
  findExceptionsByIds,
  insertException,
  insertExceptionsSkippingKnown,
  listExceptionIdsOldestFirst,
} from '../../src/db/repositories/exceptions.js';
import { dialects } from '../support/databases.js';
import { openMigratedDatabase } from '../support/migrated-database.js';

const at = new Date('2026-03-04T05:06:07.089Z');
const row = (id: string, path: string, timestamp = at) => ({
  id,
  timestamp,
  type: 'TypeError',
  message: `failed ${id}`,
  operation_id: null,
  method: 'GET',
  path,
  account_id: null,
  surface: 'admin',
  call_stack: `stack of ${id}`,
});

for (const dialect of dialects) {
  describe(`exceptions repository on ${dialect}`, () => {
    let db: Kysely<Database>;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ db, close } = await openMigratedDatabase(dialect));
      // Same millisecond for b, a, c: the tie-break orders them by id. d is a row older than the API's range.
      for (const id of ['b', 'a', 'c'])
        await insertException(db, row(id, id === 'c' ? '/admin/100%_done' : '/admin/subjects'));
      await insertException(db, row('d', '/admin/100x_done'));
      await sql`update exceptions set "timestamp" = '-infinity' where id = 'd'`.execute(db);
    }, 120_000);
    afterAll(async () => close?.());

    it('reads timestamps as Dates, clamped into 1970..9999 by the database', async () => {
      const a = await findExceptionById(db, 'a');
      expect(a?.timestamp).toBeInstanceOf(Date);
      expect(a?.timestamp.toISOString()).toBe(at.toISOString());
      const d = await findExceptionById(db, 'd');
      expect(d?.timestamp.toISOString()).toBe('1970-01-01T00:00:00.000Z');
      expect(await findExceptionById(db, 'missing')).toBeUndefined();
    });

    it('orders a page by the column, ties by id ascending even when the sort is descending', async () => {
      const page = await findExceptionPage(db, {}, { column: 'timestamp', direction: 'desc' }, { page: 0, size: 3 });
      expect(page.map((r) => r.id)).toEqual(['a', 'b', 'c']);
      const next = await findExceptionPage(db, {}, { column: 'timestamp', direction: 'desc' }, { page: 1, size: 3 });
      expect(next.map((r) => r.id)).toEqual(['d']);
      expect(await listExceptionIdsOldestFirst(db)).toEqual(['d', 'a', 'b', 'c']);
    });

    it('matches the path as a literal prefix (% and _ are not wildcards) and counts what it lists', async () => {
      const filter = { path: '/admin/100%_' };
      expect(
        (await findExceptionPage(db, filter, { column: 'timestamp', direction: 'asc' }, { page: 0, size: 10 })).map(
          (r) => r.id,
        ),
      ).toEqual(['c']);
      expect(await countExceptions(db, filter)).toBe(1);
      expect(await countExceptions(db, { from: at, to: new Date(at.getTime() + 1) })).toBe(3);
    });

    it('imports only ids not stored yet, reads rows by ids, and empties the log', async () => {
      const written = await insertExceptionsSkippingKnown(db, [row('a', '/again'), row('e', '/new')]);
      expect(written).toEqual(['e']);
      expect((await findExceptionById(db, 'a'))?.path).toBe('/admin/subjects');
      expect((await findExceptionsByIds(db, ['e', 'zz'])).map((r) => r.call_stack)).toEqual(['stack of e']);
      expect(await findExceptionsByIds(db, [])).toEqual([]);
      expect(await deleteAllExceptions(db)).toBe(5);
      expect(await countExceptions(db, {})).toBe(0);
    });
  });
}
