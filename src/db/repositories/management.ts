import { sql } from 'kysely';
import type { Selectable } from 'kysely';
import type { Database, ServiceNodesTable } from '../tables.js';
import { asDate } from './decode.js';
import type { Queryable } from './queryable.js';

/**
 * What the management operations read and clear: the server's own statistics views (cluster status), the
 * service nodes' heartbeat table, live counts (info), and the whole-database clear (truncateDatabase).
 * The statistics queries run on PGlite too, which answers them as a single primary with one connection.
 */

type ServiceNodeRow = Selectable<ServiceNodesTable>;

/** A standby streaming from this server, as pg_stat_replication shows it (LSNs and address as text). */
interface ReplicaRow {
  application_name: string | null;
  client_addr: string | null;
  state: string | null;
  sync_state: string | null;
  sent_lsn: string | null;
  replay_lsn: string | null;
  replay_lag_seconds: number | null;
}

export async function currentDatabaseName(db: Queryable): Promise<string | null> {
  const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(db);
  return rows[0]?.name ?? null;
}

/** True on a standby (pg_is_in_recovery()). */
export async function isInRecovery(db: Queryable): Promise<boolean> {
  const { rows } = await sql<{ recovering: boolean }>`select pg_is_in_recovery() as recovering`.execute(db);
  return Boolean(rows[0]?.recovering);
}

/** The standbys streaming from this server, by application name; the lag in seconds as a number. */
export async function streamingReplicas(db: Queryable): Promise<ReplicaRow[]> {
  const { rows } = await sql<ReplicaRow>`
    select application_name, client_addr::text as client_addr, state, sync_state, sent_lsn::text as sent_lsn,
           replay_lsn::text as replay_lsn, extract(epoch from replay_lag)::float8 as replay_lag_seconds
    from pg_stat_replication order by application_name`.execute(db);
  return rows.map((r) => ({
    ...r,
    replay_lag_seconds: r.replay_lag_seconds === null ? null : Number(r.replay_lag_seconds),
  }));
}

/** Connections to this database by state (a connection without one counts as `unknown`). */
export async function connectionsByState(db: Queryable): Promise<{ state: string; count: number }[]> {
  const { rows } = await sql<{ state: string; count: number }>`
    select coalesce(state, 'unknown') as state, count(*)::int as count
    from pg_stat_activity where datname = current_database() group by 1 order by 1`.execute(db);
  return rows.map((r) => ({ state: r.state, count: Number(r.count) }));
}

/** Every node that ever reported in, oldest start first. */
export async function listServiceNodes(db: Queryable): Promise<ServiceNodeRow[]> {
  const rows = await db.selectFrom('service_nodes').selectAll().orderBy('started_at', 'asc').execute();
  return rows.map((r) => ({ ...r, started_at: asDate(r.started_at), last_seen_at: asDate(r.last_seen_at) }));
}

/** Record a node's heartbeat: insert it, or move its `last_seen_at` when it is known. */
export async function upsertServiceNode(db: Queryable, node: ServiceNodeRow): Promise<void> {
  await db
    .insertInto('service_nodes')
    .values(node)
    .onConflict((oc) => oc.column('node_id').doUpdateSet({ last_seen_at: node.last_seen_at }))
    .execute();
}

/** Forget every node but this one; answers how many went. */
export async function deleteServiceNodesExcept(db: Queryable, nodeId: string): Promise<number> {
  const result = await db.deleteFrom('service_nodes').where('node_id', '!=', nodeId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** All rows of a table (count(*) is int8, which both drivers are set to parse as numbers). */
export async function countTableRows(db: Queryable, table: 'operations' | 'accounts' | 'exceptions'): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Subjects per status (statuses without subjects are absent). */
export async function countSubjectsByStatus(
  db: Queryable,
): Promise<{ status: Database['subjects']['status']; count: number }[]> {
  const rows = await db
    .selectFrom('subjects')
    .select(['status', (eb) => eb.fn.countAll<number>().as('count')])
    .groupBy('status')
    .execute();
  return rows.map((r) => ({ status: r.status, count: Number(r.count) }));
}

/** The base tables of the current schema, by name. */
export async function listBaseTables(db: Queryable): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`.execute(db);
  return rows.map((r) => r.name);
}

/**
 * Empty these tables in the caller's transaction and answer the rows each held. They are locked first so the
 * counts are exactly what TRUNCATE removes; TRUNCATE of all of them in one statement satisfies the foreign keys
 * between them (subjects <- templates, cases <- decisions).
 */
export async function truncateTablesCounting(
  trx: Queryable,
  tables: readonly string[],
): Promise<Record<string, number>> {
  const removed: Record<string, number> = {};
  if (tables.length === 0) return removed;
  const list = sql.join(tables.map((name) => sql.table(name)));
  await sql`lock table ${list} in access exclusive mode`.execute(trx);
  for (const name of tables) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(name)}`.execute(trx);
    removed[name] = Number(rows[0]?.n ?? 0);
  }
  await sql`truncate table ${list}`.execute(trx);
  return removed;
}

/** Cases still waiting for a decision: PENDING, and CONFLICTED (adjudicators disagreed; an ADMIN settles it). */
export async function countPendingAdjudicationCases(db: Queryable): Promise<number> {
  const row = await db
    .selectFrom('adjudication_cases')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('status', 'in', ['PENDING', 'CONFLICTED'])
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
