import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../src/db/tables.js';

/**
 * A cheap fingerprint of every table: row count plus the sum and maximum of the rows' `xmin` (the id of the
 * transaction that wrote each row version). Any committed INSERT, UPDATE or DELETE changes it, even one that
 * rewrites a row with the same values; a rolled-back transaction leaves it as it was. That is exactly
 * "the database is unchanged", without reading bytea columns full of images.
 */
export type Snapshot = Record<string, string>;

/** Tables a timer writes to on its own (the node heartbeat), whatever the requests do. */
const NOT_REQUEST_DRIVEN = new Set(['service_nodes']);

export async function tablesOf(db: Kysely<Database>): Promise<string[]> {
  const rows = await sql<{ table_name: string }>`
    select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`.execute(db);
  return rows.rows.map((r) => r.table_name).filter((t) => !NOT_REQUEST_DRIVEN.has(t));
}

export async function snapshot(db: Kysely<Database>, tables: string[]): Promise<Snapshot> {
  const parts = tables.map(
    (t) => sql`select ${t} as t, count(*)::text || ':' || coalesce(sum(xmin::text::bigint), 0)::text || ':' || coalesce(max(xmin::text::bigint), 0)::text as f from ${sql.table(t)}`,
  );
  const rows = await sql<{ t: string; f: string }>`${sql.join(parts, sql` union all `)}`.execute(db);
  return Object.fromEntries(rows.rows.map((r) => [r.t, r.f]));
}

/** The tables whose fingerprint differs, for the failure message. */
export function changedTables(before: Snapshot, after: Snapshot): string[] {
  return Object.keys({ ...before, ...after }).filter((t) => before[t] !== after[t]);
}
