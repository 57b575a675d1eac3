import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../src/db/tables.js';

/**
 * Two fingerprints of the tables, both of which see exactly the committed writes: a rolled-back transaction
 * leaves them as they were, and a write of the same values counts.
 *
 * - {@link writeCounts}, read after every request: a counter per table that row-level triggers (and a
 *   statement-level one for TRUNCATE) add to in the writing transaction itself, so it commits or rolls back
 *   with the write. One read of one small table, where reading every table costs a query per table.
 * - {@link rowVersions}, the independent check that the counters miss nothing: row count plus the sum and
 *   maximum of the rows' `xmin` (the id of the transaction that wrote each row version), per table. Any
 *   committed INSERT, UPDATE or DELETE changes it. The bad-input suite reads it around each operation's run and
 *   requires every table whose row versions changed to have its counter changed too.
 */
export type Snapshot = Record<string, string>;

/** Tables a timer writes to on its own (the node heartbeat), whatever the requests do. */
const NOT_REQUEST_DRIVEN = new Set(['service_nodes']);

/** The counters live in a schema of their own, which the service never lists (it reads `current_schema()`). */
const PROBE = 'bims_write_probe';

export async function tablesOf(db: Kysely<Database>): Promise<string[]> {
  const rows = await sql<{ table_name: string }>`
    select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`.execute(
    db,
  );
  return rows.rows.map((r) => r.table_name).filter((t) => !NOT_REQUEST_DRIVEN.has(t));
}

/**
 * Count every write to `tables` from now on (see {@link writeCounts}); returns the number of tables that carry
 * both triggers, read back from the catalogue, so the caller can check that none was missed.
 */
export async function installWriteCounters(db: Kysely<Database>, tables: string[]): Promise<number> {
  await sql`create schema if not exists ${sql.id(PROBE)}`.execute(db);
  await sql`create table if not exists ${sql.id(PROBE, 'writes')} (table_name text primary key, n bigint not null default 0)`.execute(
    db,
  );
  await sql`
    create or replace function ${sql.id(PROBE, 'count_write')}() returns trigger language plpgsql as $$
    begin
      update ${sql.raw(`${PROBE}.writes`)} set n = n + 1 where table_name = tg_table_name;
      return null;
    end $$`.execute(db);
  for (const table of tables) {
    await sql`insert into ${sql.id(PROBE, 'writes')} (table_name) values (${table}) on conflict do nothing`.execute(db);
    await sql`create or replace trigger bims_write_probe_rows after insert or update or delete on ${sql.table(table)}
      for each row execute function ${sql.id(PROBE, 'count_write')}()`.execute(db);
    await sql`create or replace trigger bims_write_probe_truncate after truncate on ${sql.table(table)}
      for each statement execute function ${sql.id(PROBE, 'count_write')}()`.execute(db);
  }
  const { rows } = await sql<{ n: number }>`
    select count(distinct c.relname)::int as n from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace s on s.oid = c.relnamespace
    where s.nspname = 'public' and t.tgname in ('bims_write_probe_rows', 'bims_write_probe_truncate') and c.relname = any(${tables})
    group by c.relname having count(*) = 2`.execute(db);
  return rows.length;
}

/** The committed writes per table since {@link installWriteCounters}: one small query. */
export async function writeCounts(db: Kysely<Database>): Promise<Snapshot> {
  const { rows } = await sql<{
    t: string;
    n: string;
  }>`select table_name as t, n::text as n from ${sql.id(PROBE, 'writes')}`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.t, r.n]));
}

export async function rowVersions(db: Kysely<Database>, tables: string[]): Promise<Snapshot> {
  const parts = tables.map(
    (t) =>
      sql`select ${t} as t, count(*)::text || ':' || coalesce(sum(xmin::text::bigint), 0)::text || ':' || coalesce(max(xmin::text::bigint), 0)::text as f from ${sql.table(t)}`,
  );
  const rows = await sql<{ t: string; f: string }>`${sql.join(parts, sql` union all `)}`.execute(db);
  return Object.fromEntries(rows.rows.map((r) => [r.t, r.f]));
}

/** The tables whose fingerprint differs, for the failure message. */
export function changedTables(before: Snapshot, after: Snapshot): string[] {
  return Object.keys({ ...before, ...after }).filter((t) => before[t] !== after[t]);
}
