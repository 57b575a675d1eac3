import { PrometheusRegistry, type GaugeSample } from './prometheus.js';
import type { ExtractorProvider } from '../biometrics/extractor-provider.js';
import type { GalleryService } from '../gallery/gallery-service.js';
import type { DatabasePoolStats, DialectName } from '../../db/connect.js';

/** Upper bounds of the request-duration buckets, in seconds: from a cached read to a slow enrolment. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Upper bounds of the extraction buckets: a warm face job takes tens of milliseconds, a queued one seconds. */
const EXTRACTION_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** What the scrape reads besides the counters kept here. */
interface MetricSources {
  extractors: ExtractorProvider;
  gallery: GalleryService;
  dialect: DialectName;
  /** The pg pool's connections now (PostgreSQL through `pg` only: PGlite and Workers' transient pool have none). */
  databasePool?: () => DatabasePoolStats;
  node: { version: string; runtime: string };
  startedAt: Date;
}

/**
 * The service's metrics for `GET /metrics` (docs/metrics.md): requests and their durations per operation and
 * status, extraction jobs and the pool's state, the gallery per template version, the LISTEN connection, the
 * database pool. Counters are this process's since it started (per isolate on Workers).
 */
export class ServiceMetrics {
  readonly registry = new PrometheusRegistry();
  private readonly requests = this.registry.counter(
    'bims_http_requests_total',
    'Requests answered, by operation (the seed operation id; "none" for a path that is no operation), surface, method and status',
    ['operation', 'surface', 'method', 'status'],
  );
  private readonly requestSeconds = this.registry.histogram(
    'bims_http_request_duration_seconds',
    'Time from the request reaching the app to its answer, by operation, surface and status',
    ['operation', 'surface', 'status'],
    REQUEST_BUCKETS,
  );
  private readonly extractionSeconds = this.registry.histogram(
    'bims_extraction_duration_seconds',
    'Extraction jobs from submission to result, queue wait included, by kind (face, voice, token image) and outcome',
    ['kind', 'outcome'],
    EXTRACTION_BUCKETS,
  );

  /** One answered request. */
  recordRequest(r: { operation?: string; surface?: string; method: string; status: number; seconds: number }): void {
    const key = `${r.operation}\u0000${r.surface}\u0000${r.method}\u0000${r.status}`;
    let series = this.requestSeries.get(key);
    if (!series) {
      const operation = r.operation ?? 'none';
      const surface = r.surface ?? 'none';
      const status = String(r.status);
      series = {
        count: this.requests.series({ operation, surface, method: r.method, status }),
        observe: this.requestSeconds.observer({ operation, surface, status }),
      };
      this.requestSeries.set(key, series);
    }
    series.count.value += 1;
    series.observe(r.seconds);
  }

  /**
   * The two series of each (operation, surface, method, status) seen, by one plain key: making their label keys
   * (a JSON text each) on every request was a third of what a request's metric cost. Bounded as the series
   * themselves are (operations and surfaces are the table's, methods those Node's parser accepts, statuses ours).
   */
  private readonly requestSeries = new Map<string, { count: { value: number }; observe: (seconds: number) => void }>();

  /** One extraction job (the provider times every job of the process's extractor). */
  readonly recordExtraction = (kind: 'face' | 'voice' | 'token', ok: boolean, seconds: number): void => {
    this.extractionSeconds.observe({ kind, outcome: ok ? 'ok' : 'error' }, seconds);
  };

  /** Register the families read at scrape time. Called once, when the services are built. */
  collectFrom(sources: MetricSources): void {
    const r = this.registry;
    r.collected('bims_build_info', 'Version and runtime of this process', 'gauge', () => [
      { labels: { version: sources.node.version, runtime: sources.node.runtime }, value: 1 },
    ]);
    r.collected(
      'bims_process_start_time_seconds',
      'When this process started, seconds since the epoch',
      'gauge',
      () => [{ value: sources.startedAt.getTime() / 1000 }],
    );

    const pool = async () => sources.extractors.stats();
    r.collected(
      'bims_extraction_pool_state',
      'The extraction pool: 1 for its state (idle: not started yet; running; failed; not-configured)',
      'gauge',
      async () => [{ labels: { state: (await pool()).state }, value: 1 }],
    );
    const fromPool = (pick: (s: Record<string, unknown>) => unknown) => async (): Promise<GaugeSample[]> => {
      const value = pick(await pool());
      return typeof value === 'number' ? [{ value }] : [{ value: 0 }];
    };
    r.collected(
      'bims_extraction_pool_workers',
      "Extraction workers (1 for inline extraction; the service's for remote)",
      'gauge',
      fromPool((s) => s.workers),
    );
    r.collected(
      'bims_extraction_pool_busy',
      'Extraction jobs running now',
      'gauge',
      fromPool((s) => s.busy),
    );
    r.collected(
      'bims_extraction_pool_queued',
      'Extraction jobs waiting for a worker',
      'gauge',
      fromPool((s) => s.queued),
    );
    r.collected(
      'bims_extraction_pool_jobs_total',
      'Extraction jobs finished by the pool since it started, by outcome',
      'counter',
      async () => {
        const s = (await pool()) as Record<string, unknown>;
        return (['completed', 'failed', 'cancelled'] as const).map((outcome) => ({
          labels: { outcome },
          value: typeof s[outcome] === 'number' ? (s[outcome] as number) : 0,
        }));
      },
    );
    r.collected(
      'bims_extraction_pool_restarts_total',
      'Extraction workers replaced after a crash, a timeout or a decode past its budget',
      'counter',
      fromPool((s) => s.restarts),
    );
    r.collected(
      'bims_extraction_pool_stopped_total',
      'Extraction jobs ended where they ran (their worker terminated and replaced), by reason',
      'counter',
      async () => {
        const s = (await pool()) as Record<string, unknown>;
        return (
          [
            ['decode_budget', 'overBudget'],
            ['timeout', 'timedOut'],
          ] as const
        ).map(([reason, key]) => ({
          labels: { reason },
          value: typeof s[key] === 'number' ? (s[key] as number) : 0,
        }));
      },
    );

    r.collected(
      'bims_gallery_subjects',
      'ENROLLED subjects held in the in-memory gallery, by template version',
      'gauge',
      async () => {
        const stats = await sources.gallery.stats();
        return Object.entries(stats.versions).map(([version, v]) => ({
          labels: { template_version: version },
          value: v.subjects,
        }));
      },
    );
    r.collected(
      'bims_gallery_templates',
      'Templates held in the in-memory gallery, by template version',
      'gauge',
      async () => {
        const stats = await sources.gallery.stats();
        return Object.entries(stats.versions).map(([version, v]) => ({
          labels: { template_version: version },
          value: v.templates,
        }));
      },
    );
    r.collected(
      'bims_gallery_freshness',
      "How this node learns of other nodes' gallery changes: 1 for its mode (listen: PostgreSQL NOTIFY; poll: the change log before each search)",
      'gauge',
      () => [{ labels: { mode: sources.gallery.freshnessState().mode }, value: 1 }],
    );
    r.collected(
      'bims_gallery_listen_up',
      'The LISTEN connection for gallery changes: 1 connected, 0 lost (searches read the change log until it is back); absent without one (PGlite, Workers)',
      'gauge',
      () => {
        const state = sources.gallery.freshnessState();
        return state.listener === 'none' ? [] : [{ value: state.listener === 'up' ? 1 : 0 }];
      },
    );
    r.collected('bims_gallery_listen_losses_total', 'Times the LISTEN connection was lost', 'counter', () => [
      { value: sources.gallery.freshnessState().losses },
    ]);
    r.collected(
      'bims_gallery_reconciliations_total',
      'Comparisons of the gallery with the database, and the ones that found and repaired a drift',
      'counter',
      () => {
        const state = sources.gallery.freshnessState();
        return [
          { labels: { result: 'checked' }, value: state.reconciliations },
          { labels: { result: 'repaired' }, value: state.driftsRepaired },
        ];
      },
    );

    r.collected('bims_database_info', 'The database this process uses: 1 for its dialect', 'gauge', () => [
      { labels: { dialect: sources.dialect }, value: 1 },
    ]);
    // Labelled by pool: a node opens up to both pools' max, which is what PostgreSQL's max_connections must hold.
    const pools = () => Object.entries(sources.databasePool?.() ?? {});
    r.collected(
      'bims_database_pool_connections',
      'Connections of the PostgreSQL pools (statements, reads), by state (idle, active); absent on PGlite',
      'gauge',
      () =>
        pools().flatMap(([pool, s]) => [
          { labels: { pool, state: 'idle' }, value: s.idle },
          { labels: { pool, state: 'active' }, value: s.total - s.idle },
        ]),
    );
    r.collected('bims_database_pool_waiting', 'Queries waiting for a connection of the pool', 'gauge', () =>
      pools().map(([pool, s]) => ({ labels: { pool }, value: s.waiting })),
    );
    r.collected('bims_database_pool_max', 'Most connections the pool opens (BIMS_DATABASE_POOL_SIZE)', 'gauge', () =>
      pools().map(([pool, s]) => ({ labels: { pool }, value: s.max })),
    );
  }

  render(): Promise<string> {
    return this.registry.render();
  }
}
