/**
 * `bims matcher` / `npm run matcher`: a matcher shard process of a gallery past one machine (docs/scale-out.md).
 * It holds one or more shards of BIMS_MATCHER_SHARDS (`--shards 0,2`; all of them by default), each loaded
 * from PostgreSQL with the keyset query restricted to the shard's slots and kept in step by replaying the gallery
 * change log (LISTEN/NOTIFY, and before any request that names a later change), and answers the API nodes'
 * searches on NATS (BIMS_NATS_URL) as a `bims-matcher` service. Start as many as you like per shard: the
 * replicas of a shard share its requests, and any of them answers.
 */
import { hostname } from 'node:os';
import { MatcherPool } from '../../biometrics/node-matcher-pool.js';
import type { Config } from '../../config/config.js';
import { connectDatabase, migrate } from '../../db/connect.js';
import type { ServiceContext } from '../../services/context.js';
import { GALLERY_CHANNEL } from '../../services/gallery/gallery-changes.js';
import { serveShards } from '../../services/gallery/sharded/matcher-service.js';
import { MatcherShard } from '../../services/gallery/sharded/matcher-shard.js';
import { configuredLogger } from '../../logger.js';
import { VERSION } from '../../version.js';
import { connectNats } from '../nats.js';
import { heldShards } from './matcher-args.js';
import { loadConfigOrExit } from '../node-config.js';

const USAGE = `Usage: bims matcher [--shards LIST]

Holds shards of the gallery in memory and answers the API nodes' searches over NATS.
  --shards LIST   which of the BIMS_MATCHER_SHARDS shards to hold: e.g. 0 or 0,2 or all (default: all)
Needs DATABASE_URL (PostgreSQL) and BIMS_NATS_URL; BIMS_MATCHER_SHARDS, BIMS_NATS_PREFIX, BIMS_MATCHER_THREADS and
BIMS_GALLERY_RECONCILE_SECONDS as on the API nodes (docs/configuration.md, docs/scale-out.md).`;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    return;
  }
  const config = loadConfigOrExit();
  if (!config.BIMS_NATS_URL || !config.DATABASE_URL) {
    console.error('bims matcher: set BIMS_NATS_URL and DATABASE_URL (PostgreSQL)\n\n' + USAGE);
    process.exit(2);
  }
  const held = heldShards(args, config.BIMS_MATCHER_SHARDS);
  if (typeof held === 'string') {
    console.error(`bims matcher: ${held}`);
    process.exit(2);
  }
  await run(config, held);
}

async function run(config: Config, held: number[]): Promise<void> {
  const log = configuredLogger(config);
  const host = hostname();
  // NATS first: an unreachable cluster is a start-up error, before minutes of loading.
  const nc = await connectNats(config, `bims-matcher ${host} ${process.pid} shards ${held.join(',')}`, log);
  const database = await connectDatabase({ url: config.DATABASE_URL, poolSize: config.BIMS_DATABASE_POOL_SIZE });
  await migrate(database.db); // the API nodes migrate too; a matcher may start first
  const ctx: ServiceContext = {
    db: database.db,
    dialect: database.dialect,
    config,
    log,
    now: () => new Date(),
    startedAt: new Date(),
    node: { id: crypto.randomUUID(), hostname: host, runtime: `node ${process.version}`, version: VERSION },
  };
  const threads =
    config.BIMS_MATCHER_THREADS === 1 ? undefined : new MatcherPool(config.BIMS_MATCHER_THREADS || undefined);
  const shards = held.map((s) => new MatcherShard(ctx, s, config.BIMS_MATCHER_SHARDS, threads));
  // Listening before the load: a change committed during it is replayed once the load is in.
  const unlisten = await database.listen!(
    GALLERY_CHANNEL,
    (payload) => {
      for (const s of shards)
        void s.gallery.applyRemote(payload).catch((e) => log.warn('gallery change not applied', { reason: String(e) }));
    },
    () => {
      for (const s of shards) s.gallery.resynchronise();
    },
    () => {
      for (const s of shards)
        void s.gallery.listenerRestored().catch((e) => log.warn('gallery catch-up failed', { reason: String(e) }));
    },
  );
  for (const s of shards) s.gallery.listenerStarted();
  const started = performance.now();
  await Promise.all(shards.map((s) => s.gallery.ready()));
  await Promise.all(shards.map((s) => s.gallery.catchUp()));
  const loadMs = Math.round(performance.now() - started);
  // Only now on NATS: a replica that is loading or catching up never takes a request its peers could answer.
  const service = await serveShards(nc, shards, { prefix: config.BIMS_NATS_PREFIX, version: VERSION, log, host });
  const states = await Promise.all(shards.map((s) => s.state()));
  log.info('matcher ready', {
    shards: held,
    of: config.BIMS_MATCHER_SHARDS,
    subjects: states.reduce((n, s) => n + s.subjects, 0),
    templates: states.reduce((n, s) => n + s.templates, 0),
    lastChangeId: Math.min(...states.map((s) => s.lastChangeId)),
    loadMs,
    service: service.info().id,
  });
  const reconcile =
    config.BIMS_GALLERY_RECONCILE_SECONDS > 0
      ? setInterval(() => {
          for (const s of shards)
            void s.gallery.reconcile().catch((e) => log.warn('gallery reconciliation failed', { reason: String(e) }));
        }, config.BIMS_GALLERY_RECONCILE_SECONDS * 1000)
      : undefined;
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('matcher stopping', { signal });
    clearInterval(reconcile);
    setTimeout(() => process.exit(1), 10_000).unref();
    void (async () => {
      await service.stop(); // no new requests; the NATS drain lets those in flight answer
      await nc.drain();
      await unlisten();
      await threads?.close();
      await database.close();
      process.exit(0);
    })();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

try {
  await main();
} catch (error) {
  console.error(`bims matcher failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
