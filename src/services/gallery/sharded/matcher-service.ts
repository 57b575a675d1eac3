import type { NatsConnection, Service, ServiceMsg } from 'nats';
import type { Logger } from '../../../logger.js';
import {
  MATCHER_SERVICE,
  ShardErrors,
  decodeRequest,
  encodeMessage,
  shardEndpoint,
  shardSubject,
} from './match-protocol.js';
import { ShardError, type MatcherShard } from './matcher-shard.js';
import { slotRange } from './shard-map.js';

/**
 * Offer the shards this process holds on NATS, through the service API (ADR-32): one service instance named
 * `bims-matcher` per process, one endpoint per shard on the shard's subject, in the service's queue group, so
 * that replicas of a shard (processes holding the same shard) share its requests and any one of them answers.
 * `nats micro ls | info | stats bims-matcher` list every process, its shards (endpoint metadata: shard, shards,
 * slots) and, per endpoint, what the shard holds and how far it has applied the change log (the stats' `data`).
 * Call it once the shards are loaded: a replica that is still loading (or catching up after a restart) must not
 * take requests its peers could answer.
 */
export async function serveShards(
  nc: NatsConnection,
  shards: MatcherShard[],
  options: { prefix: string; version: string; log: Logger; host: string },
): Promise<Service> {
  const bySubject = new Map(shards.map((s) => [shardSubject(options.prefix, s.shards, s.shard), s]));
  const service = await nc.services.add({
    name: MATCHER_SERVICE,
    version: options.version,
    description: 'BIMS matcher shards: exact 1:N and 1:1 over their part of the gallery',
    metadata: { host: options.host, shards: shards.map((s) => s.shard).join(','), of: String(shards[0]?.shards ?? 0) },
    statsHandler: async (endpoint) => {
      const shard = bySubject.get(endpoint.subject);
      return shard ? shard.state() : null;
    },
  });
  for (const [subject, shard] of bySubject) {
    const range = slotRange(shard.shard, shard.shards);
    service.addEndpoint(shardEndpoint(shard.shard), {
      subject,
      metadata: { shard: String(shard.shard), shards: String(shard.shards), slots: `${range.from}-${range.to - 1}` },
      handler: (error, msg) => {
        if (error) {
          options.log.error('matcher endpoint failed', { shard: shard.shard, reason: error.message });
          return;
        }
        void respond(shard, msg, options.log);
      },
    });
  }
  return service;
}

async function respond(shard: MatcherShard, msg: ServiceMsg, log: Logger): Promise<void> {
  const decoded = decodeRequest(msg.data);
  if ('error' in decoded) {
    msg.respondError(ShardErrors.badRequest, decoded.error);
    return;
  }
  try {
    msg.respond(encodeMessage(await shard.answer(decoded.request)));
  } catch (error) {
    if (error instanceof ShardError) {
      msg.respondError(error.code, error.message);
      return;
    }
    log.error('matcher request failed', { shard: shard.shard, op: decoded.request.op, reason: String(error) });
    msg.respondError(ShardErrors.internal, 'the shard failed to answer');
  }
}
