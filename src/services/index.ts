import type { ServiceContext } from './context.js';
import { AuthService } from './auth/auth-service.js';
import { SettingsService } from './settings/settings.js';
import { GatewayService } from './gateway/gateway-service.js';
import { GalleryCache } from './gallery/gallery-cache.js';
import { type GalleryFreshness } from './gallery/gallery-sync.js';
import { type GalleryService } from './gallery/gallery-service.js';
import type { MatcherCluster } from './gallery/sharded/matcher-cluster.js';
import { ShardedGallery } from './gallery/sharded/sharded-gallery.js';
import { LicensingService } from './licensing/licensing-service.js';
import type { MatcherThreads } from '../biometrics/matcher-types.js';
import { ExtractorProvider } from './biometrics/extractor-provider.js';
import type { Extractor } from '../extraction/extractor.js';
import { ServiceMetrics } from './metrics/service-metrics.js';
import type { DatabasePoolStats } from '../db/connect.js';

/** The services a request can reach; built once per process by {@link createServices}. */
export interface Services {
  ctx: ServiceContext;
  auth: AuthService;
  /** Effective settings, cached in-process and shared by every request. */
  settings: SettingsService;
  /** The media gateway (Janus, through the sidecar); holds the keepalive timers of live sessions. */
  gateway: GatewayService;
  /** The face extractor, started on first use. */
  extractors: ExtractorProvider;
  /** The gallery of ENROLLED templates, in step with the database: in this process's memory, or a matcher cluster's. */
  gallery: GalleryService;
  /** The licence in force (cached reads of its source); countUsage enforces it inside each operation's transaction. */
  licensing: LicensingService;
  /** Requests, extraction, gallery and database pool figures for `GET /metrics`. */
  metrics: ServiceMetrics;
}

export function createServices(
  ctx: ServiceContext,
  options: {
    createExtractor?: (signal: AbortSignal) => Promise<Extractor>;
    galleryFreshness?: GalleryFreshness;
    databasePool?: () => DatabasePoolStats;
    matcherThreads?: MatcherThreads;
    /** A matcher cluster that holds the gallery instead of this process (BIMS_NATS_URL, docs/scale-out.md). */
    matcherCluster?: MatcherCluster;
  } = {},
): Services {
  const metrics = new ServiceMetrics();
  const extractors = new ExtractorProvider(options.createExtractor, metrics.recordExtraction);
  const gallery = options.matcherCluster
    ? new ShardedGallery(ctx, options.matcherCluster)
    : new GalleryCache(ctx, options.galleryFreshness, options.matcherThreads);
  metrics.collectFrom({
    extractors,
    gallery,
    dialect: ctx.dialect,
    databasePool: options.databasePool,
    node: ctx.node,
    startedAt: ctx.startedAt,
  });
  return {
    ctx,
    auth: new AuthService(ctx),
    settings: new SettingsService(ctx),
    gateway: new GatewayService(ctx),
    extractors,
    gallery,
    licensing: new LicensingService(ctx),
    metrics,
  };
}
