import { serve } from '@hono/node-server';
import type { Server } from 'node:http';
import { HTTP_SERVER_OPTIONS, prepareHttpServer } from './http-server.js';
import { loadConfigOrExit } from './node-config.js';
import { hostname } from 'node:os';
import { baseUrlOf } from '../config/config.js';
import { extractorOptionsOf } from './extractor-options.js';
import { boot } from './bootstrap.js';
import { nodeAssetReader } from './node-assets.js';
import { readIncomingHeader } from './node-headers.js';
import { startSidecarChild, type SidecarChild } from './node-sidecar.js';
import { startDashboardChild, type DashboardChild } from './node-dashboard.js';
import { configuredLogger } from '../logger.js';
import { createExtractor } from '../extraction/index.js';
import { MatcherPool } from '../biometrics/node-matcher-pool.js';
import { chooseFaceBackend, type FaceBackendChoice } from '../extraction/node-face-backend.js';
import { prepareGateway, reportStartup } from './startup-summary.js';
import { connectMatcherCluster } from './nats.js';

/** Node entry: configuration from process.env, PGlite or PostgreSQL, graceful shutdown on SIGTERM. */
async function main(): Promise<void> {
  let config = loadConfigOrExit();
  // The face models' backend, before starting anything: an explicit `native` that cannot be had stops here with
  // one line; `auto` takes native where onnxruntime-node is installed, else wasm. Delegated extraction has none here.
  const faceBackend: FaceBackendChoice | undefined = config.BIMS_EXTRACTION_URL
    ? undefined
    : chooseFaceBackend(config.BIMS_EXTRACTION_BACKEND);
  // The sidecar (Janus's supervisor) first, so the API learns its token and address.
  let sidecar: SidecarChild | null = null;
  const gateway = prepareGateway(config); // installs a missing Janus when allowed; says so when not
  if (config.BIMS_SIDECAR === 'on') {
    sidecar = await startSidecarChild(config, configuredLogger(config));
    config = sidecar.config;
  }
  // The dashboard component, unless DASHBOARD_URL says it runs elsewhere; the proxy forwards to it.
  let dashboard: DashboardChild | null = null;
  if (!config.DASHBOARD_URL) {
    dashboard = await startDashboardChild(config, configuredLogger(config));
    config = dashboard.config;
  }
  const booted = await boot({
    config,
    runtime: `node ${process.version}`,
    hostname: hostname(),
    announceAdminPassword: (password) =>
      console.log(
        `\n  BIMS created the account 'admin' with the password: ${password}\n  It is shown only this once; set BIMS_ADMIN_PASSWORD to choose it yourself.\n`,
      ),
    clientAddress: (_request, env) =>
      (env as { incoming?: { socket?: { remoteAddress?: string } } })?.incoming?.socket?.remoteAddress ?? 'unknown',
    readHeader: readIncomingHeader,
    readAsset: nodeAssetReader(),
    createExtractor: (signal) =>
      createExtractor(extractorOptionsOf(config, { signal, ...(faceBackend ? { backend: faceBackend.backend } : {}) })),
    // With a matcher cluster (BIMS_NATS_URL) the gallery is held by its shard processes, not here.
    ...(config.BIMS_NATS_URL
      ? { matcherCluster: await connectMatcherCluster(config, hostname(), configuredLogger(config)) }
      : // 1:N searches of large galleries shared across threads (none start until a partition is large enough).
        config.BIMS_MATCHER_THREADS === 1
        ? {}
        : { matcherThreads: new MatcherPool(config.BIMS_MATCHER_THREADS || undefined) }),
  });
  // Warm the extraction pool now, so the first enrolment does not wait for it (a failure is reported by the first request that needs it).
  let stopping = false;
  void booted.services.extractors.get().catch((error) => {
    // Stopped before it was warm: nothing is unavailable, the service is going away.
    if (!stopping) booted.services.ctx.log.warn('face extraction unavailable', { reason: String(error) });
  });
  const server = serve(
    { fetch: booted.app.fetch, port: config.PORT, hostname: config.HOST, serverOptions: HTTP_SERVER_OPTIONS },
    (info) => {
      booted.services.ctx.log.info('listening', {
        url: baseUrlOf({ ...config, PORT: info.port }),
        database: booted.services.ctx.dialect,
        docs: `${baseUrlOf({ ...config, PORT: info.port })}/docs`,
        dashboard: `${baseUrlOf({ ...config, PORT: info.port })}/dashboard/`,
      });
      void reportStartup(booted.services, { ...config, PORT: info.port }, gateway, faceBackend?.why);
    },
  );
  prepareHttpServer(server as Server, config.BIMS_HTTP_KEEP_ALIVE_SECONDS);

  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    booted.services.ctx.log.info('shutting down: finishing requests in flight', { signal });
    // close() stops accepting connections and calls back once those in flight have been answered.
    server.close(async () => {
      await booted.close();
      await Promise.all([sidecar?.stop(), dashboard?.stop()]);
      process.exit(0);
    });
    // Keep-alive connections with no request in flight would hold close() open; end them.
    (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
    setTimeout(() => process.exit(1), 30_000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error) => {
  console.error(`BIMS failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
