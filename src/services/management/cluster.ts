import { serverVersion } from '../../db/connect.js';
import {
  connectionsByState,
  currentDatabaseName,
  isInRecovery,
  listServiceNodes,
  streamingReplicas,
} from '../../db/repositories/management.js';
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
  const database = await probe(notes, 'current_database()', null as string | null, () => currentDatabaseName(db));
  const role = await probe(notes, 'pg_is_in_recovery()', 'unknown' as const, async () =>
    (await isInRecovery(db)) ? ('replica' as const) : ('primary' as const),
  );
  const replication = await probe(notes, 'pg_stat_replication', [], async () =>
    (await streamingReplicas(db)).map((r) => ({
      applicationName: r.application_name,
      clientAddress: r.client_addr,
      state: r.state,
      syncState: r.sync_state,
      sentLsn: r.sent_lsn,
      replayLsn: r.replay_lsn,
      replayLagSeconds: r.replay_lag_seconds,
    })),
  );
  const connections = await probe(notes, 'pg_stat_activity', [], () => connectionsByState(db));

  // The service's own table: a failure here is a real fault and is left to the exception log.
  const now = ctx.now().getTime();
  const nodes = (await listServiceNodes(db)).map((r) => ({
    nodeId: r.node_id,
    hostname: r.hostname,
    version: r.version,
    runtime: r.runtime,
    startedAt: r.started_at.toISOString(),
    lastSeenAt: r.last_seen_at.toISOString(),
    alive: now - r.last_seen_at.getTime() <= NODE_ALIVE_SECONDS * 1000,
    current: r.node_id === ctx.node.id,
  }));

  return { dialect: ctx.dialect, serverVersion: version, database, role, replication, connections, nodes, notes };
}
