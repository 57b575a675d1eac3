import { sql } from 'kysely';
import { serverVersion } from '../../db/connect.js';
import type { ServiceContext } from '../context.js';
import { reportNode } from './nodes.js';

/** A node that has not reported in for this long is shown as not alive (the heartbeat is every 30 s). */
export const NODE_ALIVE_SECONDS = 90;

/**
 * Run one statistics query; when the database cannot answer it (a managed server hiding a view, a build
 * without it), say so in `notes` and carry on with the fallback, so the status never fails as a whole.
 */
async function probe<T>(notes: string[], what: string, fallback: T, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    notes.push(`${what} unavailable: ${error instanceof Error ? error.message : String(error)}`);
    return fallback;
  }
}

interface ReplicationRow {
  application_name: string | null;
  client_addr: string | null;
  state: string | null;
  sync_state: string | null;
  sent_lsn: string | null;
  replay_lsn: string | null;
  replay_lag_seconds: number | null;
}

/**
 * The cluster as PostgreSQL reports it: this server's role (pg_is_in_recovery), the standbys streaming from it
 * (pg_stat_replication), the connections to this database by state (pg_stat_activity), and the service
 * nodes that share the database. The same queries run on PGlite, which answers them as a single
 * primary with its one in-process connection.
 */
export async function clusterStatus(ctx: ServiceContext) {
  const notes: string[] = [];
  const db = ctx.db;
  // Report this node first, so it shows as alive even if its heartbeat is late.
  await probe(notes, 'node heartbeat', undefined, () => reportNode(ctx));

  const version = await probe(notes, 'server_version', 'unknown', () => serverVersion(db));
  const database = await probe(notes, 'current_database()', null as string | null, async () => {
    const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(db);
    return rows[0]?.name ?? null;
  });
  const role = await probe(notes, 'pg_is_in_recovery()', 'unknown' as const, async () => {
    const { rows } = await sql<{ recovering: boolean }>`select pg_is_in_recovery() as recovering`.execute(db);
    return rows[0]?.recovering ? ('replica' as const) : ('primary' as const);
  });
  const replication = await probe(notes, 'pg_stat_replication', [], async () => {
    const { rows } = await sql<ReplicationRow>`
      select application_name, client_addr::text as client_addr, state, sync_state, sent_lsn::text as sent_lsn,
             replay_lsn::text as replay_lsn, extract(epoch from replay_lag)::float8 as replay_lag_seconds
      from pg_stat_replication order by application_name`.execute(db);
    return rows.map((r) => ({
      applicationName: r.application_name,
      clientAddress: r.client_addr,
      state: r.state,
      syncState: r.sync_state,
      sentLsn: r.sent_lsn,
      replayLsn: r.replay_lsn,
      replayLagSeconds: r.replay_lag_seconds === null ? null : Number(r.replay_lag_seconds),
    }));
  });
  const connections = await probe(notes, 'pg_stat_activity', [], async () => {
    const { rows } = await sql<{ state: string; count: number }>`
      select coalesce(state, 'unknown') as state, count(*)::int as count
      from pg_stat_activity where datname = current_database() group by 1 order by 1`.execute(db);
    return rows.map((r) => ({ state: r.state, count: Number(r.count) }));
  });

  // The service's own table: a failure here is a real fault and is left to the exception log.
  const now = ctx.now().getTime();
  const rows = await db.selectFrom('service_nodes').selectAll().orderBy('started_at', 'asc').execute();
  const nodes = rows.map((r) => ({
    nodeId: r.node_id,
    hostname: r.hostname,
    version: r.version,
    runtime: r.runtime,
    startedAt: new Date(r.started_at).toISOString(),
    lastSeenAt: new Date(r.last_seen_at).toISOString(),
    alive: now - new Date(r.last_seen_at).getTime() <= NODE_ALIVE_SECONDS * 1000,
    current: r.node_id === ctx.node.id,
  }));

  return { dialect: ctx.dialect, serverVersion: version, database, role, replication, connections, nodes, notes };
}
