import type { Config } from '../config/config.js';
import { connectDatabase, migrate, type DatabaseHandle } from '../db/connect.js';
import { createApp, type AppDeps } from '../app.js';
import { createServices, type Services } from '../services/index.js';
import type { ServiceContext } from '../services/context.js';
import { configuredLogger, type Logger } from '../logger.js';
import { ensureInitialAdmin } from '../services/accounts/accounts.js';
import { ensureBuiltinClients } from '../services/auth/oauth-clients.js';
import { reportNode } from '../services/management/nodes.js';
import { VERSION } from '../version.js';
import type { Extractor } from '../extraction/extractor.js';
import type { MatcherThreads } from '../biometrics/matcher-types.js';
import type { MatcherCluster } from '../services/gallery/sharded/matcher-cluster.js';
import { GALLERY_CHANNEL } from '../services/gallery/gallery-changes.js';
import { type GalleryFreshness } from '../services/gallery/gallery-sync.js';
import { CAPTURE_CHANNEL } from '../services/capture/capture-store.js';
import { GATEWAY_EVENT_CHANNEL } from '../services/gateway/event-relay.js';
import { pruneChanges } from '../services/gallery/change-log.js';

export interface BootOptions {
  config: Config;
  runtime: string;
  hostname: string;
  /** 'memory://' for an in-memory PGlite (tests); otherwise config decides. */
  pgliteDir?: string;
  /**
   * An open database to run on instead of connecting to the configured one; the caller owns it: close() leaves it
   * open (tests lend one migrated PGlite to suite after suite, test/support/pglite-pool.ts). Migrations still run.
   */
  database?: DatabaseHandle;
  /** One PostgreSQL connection per query or transaction, no LISTEN (Cloudflare Workers). */
  transientConnections?: boolean;
  /**
   * How the gallery learns of other nodes' changes: 'listen' (NOTIFY) or 'poll' (read the change log before
   * each search). Default: 'poll' when the connection cannot LISTEN (transient connections), else 'listen'.
   * Tests set 'poll' to run a second node the way Workers run.
   */
  galleryFreshness?: GalleryFreshness;
  logger?: Logger;
  now?: () => Date;
  /** Announce the generated admin password (printed once on first start). */
  announceAdminPassword?: (password: string) => void;
  clientAddress?: AppDeps['clientAddress'];
  readHeader?: AppDeps['readHeader'];
  readAsset?: AppDeps['readAsset'];
  /** Makes the face extractor on first use (a worker pool on Node, inline elsewhere); absent: biometric operations answer 503. */
  createExtractor?: (signal: AbortSignal) => Promise<Extractor>;
  /** Threads that share 1:N searches (Node's MatcherPool); closed with the service. Absent: one thread. */
  matcherThreads?: MatcherThreads & { close(): Promise<void> };
  /**
   * A matcher cluster that holds the gallery (BIMS_NATS_URL; the Node entry connects to NATS): this process then
   * loads no template. Closed with the service.
   */
  matcherCluster?: MatcherCluster & { close(): Promise<void> };
}

export interface Booted {
  app: ReturnType<typeof createApp>;
  services: Services;
  close(): Promise<void>;
}

/**
 * Runtime-neutral start-up: connect, migrate, make the first admin, report this node, build the app.
 * Runtime entries call this and then hand `app.fetch` to their server.
 */
export async function boot(options: BootOptions): Promise<Booted> {
  const { config } = options;
  const log = options.logger ?? configuredLogger(config);
  const owned = !options.database;
  const database =
    options.database ??
    (await connectDatabase({
      url: config.DATABASE_URL,
      dataDir: options.pgliteDir ?? config.BIMS_DATA_DIR,
      poolSize: config.BIMS_DATABASE_POOL_SIZE,
      transient: options.transientConnections,
    }));
  try {
    const applied = await migrate(database.db);
    if (applied.length) log.info('migrations applied', { migrations: applied });
  } catch (error) {
    if (owned) await database.close();
    throw error;
  }
  const ctx: ServiceContext = {
    db: database.db,
    dialect: database.dialect,
    config,
    log,
    now: options.now ?? (() => new Date()),
    startedAt: new Date(),
    node: { id: crypto.randomUUID(), hostname: options.hostname, runtime: options.runtime, version: VERSION },
  };
  await ensureInitialAdmin(ctx, (password) => {
    (
      options.announceAdminPassword ??
      ((p) =>
        log.warn('created the admin account with a generated password; set BIMS_ADMIN_PASSWORD to choose one', {
          username: 'admin',
          password: p,
        }))
    )(password);
  });
  await ensureBuiltinClients(ctx);
  const freshness = options.galleryFreshness ?? (options.transientConnections ? 'poll' : 'listen');
  const services = createServices(ctx, {
    createExtractor: options.createExtractor,
    galleryFreshness: freshness,
    databasePool: database.poolStats,
    matcherThreads: options.matcherThreads,
    matcherCluster: options.matcherCluster,
  });
  // Each node prunes the gallery change log, the finished capture sessions and the gateway sessions Janus no
  // longer has when it reports in (at start, then with every heartbeat; on Workers, where timers do not outlive
  // the request, at each isolate's start). One indexed query each when there is nothing to prune (the gateway
  // is asked only when a session row is old enough to judge).
  const reportAndPrune = async () => {
    await reportNode(ctx);
    await pruneChanges(ctx.db);
    await services.gateway.captures.store.prune();
    // Sessions of a node that died stop counting against their owners once Janus has ended them.
    await services.gateway.prune();
  };
  await reportAndPrune();
  let beat: Promise<void> = Promise.resolve();
  const heartbeat = setInterval(() => void (beat = reportAndPrune().catch(() => {})), 30_000);
  (heartbeat as { unref?: () => void }).unref?.();
  // Other processes on the same PostgreSQL database wake this one when they change the gallery; it then replays
  // the change log in commit order. While the listening connection is down, the gallery reads the change log
  // before each search instead (see GalleryCache.resynchronise), and reconciles once it is back.
  const unlisten =
    freshness === 'listen' && services.gallery.listens
      ? await database.listen?.(
          GALLERY_CHANNEL,
          (payload) =>
            void services.gallery
              .applyRemote(payload)
              .catch((error) => log.warn('gallery change not applied', { reason: String(error) })),
          () => services.gallery.resynchronise(),
          () =>
            void services.gallery
              .listenerRestored()
              .catch((error) => log.warn('gallery catch-up or reconciliation failed', { reason: String(error) })),
        )
      : undefined;
  if (unlisten) services.gallery.listenerStarted();
  // A stop sent to another node for a capture this node runs ends it at once (else at the next keepalive,
  // which finds the gateway session gone).
  const unlistenCaptures =
    freshness === 'listen'
      ? await database.listen?.(
          CAPTURE_CHANNEL,
          (payload) => services.gateway.captures.cancel(Number(payload), 'stopped by the client'),
          () => {},
        )
      : undefined;
  // A plugin's answer another node's poll took, for a connect made here (services/gateway/event-relay.ts).
  const unlistenGatewayEvents =
    freshness === 'listen'
      ? await database.listen?.(
          GATEWAY_EVENT_CHANNEL,
          (payload) => services.gateway.relayed(payload),
          () => {},
        )
      : undefined;
  // Load the gallery now rather than on the first identification.
  void services.gallery.ready().catch((error) => log.error('gallery could not be loaded', { reason: String(error) }));
  // Each node checks now and then that its gallery still equals the database, and repairs it if not (a change
  // lost by a bug or an outage must not live on in memory). Workers' isolates hold no timers: they poll the log.
  let reconciling: Promise<unknown> = Promise.resolve();
  const reconcileTimer =
    config.BIMS_GALLERY_RECONCILE_SECONDS > 0 && !options.transientConnections
      ? setInterval(
          () =>
            void (reconciling = services.gallery
              .reconcile()
              .catch((error) => log.warn('gallery reconciliation failed', { reason: String(error) }))),
          config.BIMS_GALLERY_RECONCILE_SECONDS * 1000,
        )
      : undefined;
  (reconcileTimer as { unref?: () => void } | undefined)?.unref?.();
  const app = createApp({
    services,
    clientAddress: options.clientAddress,
    readHeader: options.readHeader,
    readAsset: options.readAsset,
  });
  return {
    app,
    services,
    async close() {
      clearInterval(heartbeat);
      clearInterval(reconcileTimer);
      await unlisten?.();
      await unlistenCaptures?.();
      await unlistenGatewayEvents?.();
      await services.gateway.close();
      await services.extractors.close();
      await options.matcherThreads?.close();
      await options.matcherCluster?.close();
      // PGlite's close() never returns while a query is in flight, and the gallery may still be loading
      // (boot starts it without waiting): a CLI that finished quickly hung on exit.
      await Promise.all([services.gallery.ready().catch(() => {}), beat, reconciling]);
      if (owned) await database.close();
    },
  };
}
