import { connect, type NatsConnection } from 'nats';
import type { Config } from '../config/config.js';
import { MatcherCluster } from '../services/gallery/sharded/matcher-cluster.js';
import type { Logger } from '../logger.js';

/**
 * A NATS connection for an API node or a matcher process (BIMS_NATS_URL, every server of the cluster, so the
 * client can fail over): reconnects for ever, every 250 ms per server, and logs each disconnect and reconnect.
 * The first connection fails at once when no server answers (a start-up error, not a silent wait).
 */
export async function connectNats(config: Config, name: string, log: Logger): Promise<NatsConnection> {
  const servers = config.BIMS_NATS_URL!.split(',');
  const nc = await connect({ servers, name, maxReconnectAttempts: -1, reconnectTimeWait: 250, pingInterval: 10_000 });
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'error')
        log.warn('NATS connection lost', { server: String(status.data) });
      else if (status.type === 'reconnect') log.info('NATS reconnected', { server: String(status.data) });
    }
  })().catch(() => {});
  log.info('NATS connected', { server: nc.getServer(), name });
  return nc;
}

/** The matcher cluster an API node sends its searches to, with the connection it owns (closed with the service). */
export async function connectMatcherCluster(
  config: Config,
  hostname: string,
  log: Logger,
): Promise<MatcherCluster & { close(): Promise<void> }> {
  const nc = await connectNats(config, `bims-api ${hostname} ${process.pid}`, log);
  const cluster = new MatcherCluster(nc, {
    shards: config.BIMS_MATCHER_SHARDS,
    prefix: config.BIMS_NATS_PREFIX,
    timeoutMs: config.BIMS_MATCHER_TIMEOUT_MS,
    log,
  });
  return Object.assign(cluster, { close: () => nc.drain() });
}
