import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import type { Database } from '../../src/db/tables.js';
import { migratedPgliteImage } from './pglite-image.js';
import { lendMigratedPglite } from './pglite-pool.js';
import { testSettings } from './test-settings.js';

/**
 * A PGlite lent by the pool to a second user after a first must look, to every statement, like one freshly opened
 * from the migrated image: no rows, sequences where they start, no LISTEN, no session settings, no temporary
 * tables, no open transaction; and the first user's handle must reach it no more. Compared with an instance
 * opened from the image for this test, through the same observations.
 */

/** What a user of the database can see of its state (reads every sequence's next value: use once per instance). */
async function observe(db: Kysely<Database>) {
  const tables = await sql<{
    name: string;
  }>`select tablename as name from pg_tables where schemaname = 'public' order by 1`.execute(db);
  const rows: Record<string, unknown[]> = {};
  for (const { name } of tables.rows) rows[name] = (await sql`select * from ${sql.table(name)}`.execute(db)).rows;
  // Applied at some moment; the names are what matter.
  rows.kysely_migration = (rows.kysely_migration as { name: string }[]).map((m) => m.name);
  const sequences = await sql<{
    name: string;
  }>`select sequencename as name from pg_sequences where schemaname = 'public' order by 1`.execute(db);
  const next: Record<string, number> = {};
  for (const { name } of sequences.rows) {
    next[name] = (await sql<{ n: number }>`select nextval(${name}::regclass)::int as n`.execute(db)).rows[0]!.n;
  }
  const session = await sql<Record<string, unknown>>`select
      (select array_agg(c order by c) from pg_listening_channels() c) as listening,
      current_setting('statement_timeout') as statement_timeout,
      current_setting('search_path') as search_path,
      current_setting('application_name') as application_name,
      (select count(*)::int from pg_class where relpersistence = 't') as temporary_relations,
      (select count(*)::int from pg_prepared_statements) as prepared,
      (select count(*)::int from pg_locks where locktype = 'advisory') as advisory_locks,
      now() = statement_timestamp() as outside_transaction`.execute(db);
  return { tables: tables.rows.map((t) => t.name), rows, next, session: session.rows[0] };
}

/** Leave behind everything a service or a suite could: rows in every kind of table, sequences moved, a session changed. */
async function dirty(db: Kysely<Database>) {
  await sql`insert into accounts (username, password_hash, role) values ('leaked', 'x', 'ADMIN')`.execute(db);
  await sql`insert into subjects (subject_id, status) values ('leaked-subject', 'ENROLLED')`.execute(db);
  await sql`insert into settings (key, value) values ('leaked', '"1"')`.execute(db);
  await sql`select nextval('subject_revisions')`.execute(db);
  await sql`listen leaked_channel`.execute(db);
  await sql`set statement_timeout = 4321`.execute(db);
  await sql`select set_config('application_name', 'leaked', false)`.execute(db);
  await sql`create temporary table leaked_temp (n int)`.execute(db);
  await sql`prepare leaked_statement as select 1`.execute(db);
  await sql`select pg_advisory_lock(42)`.execute(db);
  // A transaction begun and never ended (a raw BEGIN; Kysely's own transactions end with their callback).
  await sql`begin`.execute(db);
  await sql`insert into settings (key, value) values ('in-open-transaction', '"1"')`.execute(db);
}

describe.skipIf(testSettings().BIMS_TEST_PGLITE_POOL === 'off')(
  'PGlite pool: a lent instance comes back as the image',
  () => {
    let fresh: DatabaseHandle;
    let freshState: Awaited<ReturnType<typeof observe>>;

    beforeAll(async () => {
      fresh = await connectDatabase({ dataDir: 'memory://', loadDataDir: await migratedPgliteImage() });
      freshState = await observe(fresh.db);
    });
    afterAll(async () => {
      await fresh?.close();
    });

    it('the image state the comparisons start from has every table empty and no session state', () => {
      expect(freshState.tables.length).toBeGreaterThan(20);
      expect(freshState.rows.accounts).toEqual([]);
      expect(freshState.next.subject_revisions).toBe(1);
      expect(freshState.session).toMatchObject({ listening: null, statement_timeout: '0', temporary_relations: 0 });
    });

    it('rows, sequences, LISTEN, settings, temporary tables, prepared statements, locks and an open transaction do not reach the next user', async () => {
      const first = await lendMigratedPglite();
      await dirty(first.db);
      // The first user sees what it left (so the comparison below is not vacuous).
      const seen = await sql<{ n: number }>`select count(*)::int as n from accounts`.execute(first.db);
      expect(seen.rows[0]!.n).toBe(1);
      await first.close();

      const second = await lendMigratedPglite();
      try {
        expect(second.writes).toBe(first.writes); // the same instance, lent again
        expect(await observe(second.db)).toEqual(freshState);
      } finally {
        await second.close();
      }
    });

    it('identity sequences start again: the next user gets the ids a fresh instance gives', async () => {
      const first = await lendMigratedPglite();
      const insert = (db: Kysely<Database>) =>
        sql<{ id: number }>`insert into subjects (subject_id, status) values ('s', 'ENROLLED') returning id`.execute(
          db,
        );
      const firstId = (await insert(first.db)).rows[0]!.id;
      await insert(first.db).catch(() => {}); // a duplicate subject_id: fails after taking an id
      await first.close();
      const second = await lendMigratedPglite();
      try {
        expect(second.writes).toBe(first.writes);
        expect((await insert(second.db)).rows[0]!.id).toBe(firstId);
      } finally {
        await second.close();
      }
    });

    it("a returned handle's statements fail instead of reaching the next user", async () => {
      const first = await lendMigratedPglite();
      await first.close();
      const second = await lendMigratedPglite();
      try {
        expect(second.writes).toBe(first.writes);
        await expect(sql`insert into settings (key, value) values ('late', '"1"')`.execute(first.db)).rejects.toThrow(
          /given back/,
        );
        const rows = await sql`select * from settings`.execute(second.db);
        expect(rows.rows).toEqual([]);
      } finally {
        await second.close();
      }
    });

    it('an instance returned with a transaction still open through its handle is not lent again', async () => {
      const first = await lendMigratedPglite();
      let finish!: () => void;
      const holding = new Promise<void>((resolve) => (finish = resolve));
      let began!: () => void;
      const begun = new Promise<void>((resolve) => (began = resolve));
      const transaction = first.db.transaction().execute(async (trx) => {
        await sql`insert into settings (key, value) values ('held', '"1"')`.execute(trx);
        began();
        await holding;
        await sql`insert into settings (key, value) values ('after-return', '"1"')`.execute(trx);
      });
      await begun;
      await first.close();
      const second = await lendMigratedPglite();
      try {
        expect(second.writes).not.toBe(first.writes);
        finish();
        await transaction.catch(() => {});
        expect((await sql`select * from settings`.execute(second.db)).rows).toEqual([]);
      } finally {
        await second.close();
      }
    });

    it('an instance whose schema a user changed is not lent again', async () => {
      const first = await lendMigratedPglite();
      await sql`alter table settings add column leaked int`.execute(first.db);
      await first.close();
      const second = await lendMigratedPglite();
      try {
        expect(second.writes).not.toBe(first.writes);
        const columns = await sql<{ name: string }>`select column_name as name from information_schema.columns
        where table_name = 'settings' and column_name = 'leaked'`.execute(second.db);
        expect(columns.rows).toEqual([]);
      } finally {
        await second.close();
      }
    });

    it('a fresh instance is neither one lent before nor lent again', async () => {
      const lent = await lendMigratedPglite();
      await lent.close();
      const fresh = await lendMigratedPglite({ fresh: true });
      await fresh.close();
      const next = await lendMigratedPglite();
      try {
        expect(fresh.writes).not.toBe(lent.writes);
        expect(next.writes).toBe(lent.writes);
      } finally {
        await next.close();
      }
    });
  },
);
