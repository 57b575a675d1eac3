import { upsertServiceNode } from '../../db/repositories/management.js';
import type { ServiceContext } from '../context.js';

/** Record that this process is alive, for the cluster status (upsert by node id). */
export async function reportNode(ctx: ServiceContext): Promise<void> {
  const now = ctx.now();
  await upsertServiceNode(ctx.db, {
    node_id: ctx.node.id,
    hostname: ctx.node.hostname,
    version: ctx.node.version,
    runtime: ctx.node.runtime,
    started_at: ctx.startedAt,
    last_seen_at: now,
  });
}
