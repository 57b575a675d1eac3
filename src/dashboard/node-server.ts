import { serve } from '@hono/node-server';
import { readdir, readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { join, relative, sep } from 'node:path';
import { createDashboardApp } from './app.js';
import { indexFiles, servable, type StaticFiles } from './static-files.js';
import { bundleCaptureHelper } from './node-capture-bundle.js';

/** The hand-written pages, scripts and styles, served as they are (no build step). */
export const PUBLIC_DIR = fileURLToPath(new URL('./public/', import.meta.url));

/** Every servable file under the public folder, by its path relative to it with forward slashes, and `extra` files. */
async function readPublicFiles(
  dir = PUBLIC_DIR,
  extra: { name: string; bytes: Uint8Array }[] = [],
): Promise<StaticFiles> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = [];
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const name = relative(dir, path).split(sep).join('/');
    if (servable(name)) files.push({ name, bytes: new Uint8Array(await readFile(path)) });
  }
  return indexFiles([...files, ...extra]);
}

export interface DashboardServer {
  url: string;
  stop(): Promise<void>;
}

/** Serve the dashboard on host:port (0 picks a free port); resolves once listening, rejects if it cannot. */
export async function startDashboardServer(options: {
  host: string;
  port: number;
  maxStreams?: number;
  /**
   * Seconds an idle keep-alive connection is held (BIMS_HTTP_KEEP_ALIVE_SECONDS, 65 by default). Its client is
   * the API's proxy, which keeps connections to it: with Node's 5 s, a request sent on a connection idle for
   * almost 5 s met the server closing it, and the proxy answered 502 for a script of the page (one test run in
   * four under load: the sign-in form never drew). src/runtime/http-server.ts says the same of the API's server.
   */
  keepAliveSeconds?: number;
  warn?: (message: string, fields: Record<string, unknown>) => void;
}): Promise<DashboardServer> {
  // The camera page's script is built from the SDK's source; without it the rest of the dashboard still works
  // and the camera page says the helper is missing.
  const capture = await bundleCaptureHelper().catch((error: unknown) => {
    options.warn?.(
      'dashboard: the camera page has no capture helper (esbuild could not bundle src/sdk/gateway-capture)',
      { error: String(error) },
    );
    return null;
  });
  const app = createDashboardApp(await readPublicFiles(PUBLIC_DIR, capture ? [capture] : []), {
    maxStreams: options.maxStreams,
  });
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: options.port, hostname: options.host }, (info: AddressInfo) => {
      const host = info.address.includes(':') ? `[${info.address}]` : info.address;
      resolve({
        url: `http://${host}:${info.port}`,
        stop: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            // Event streams and idle keep-alive connections would hold close() open.
            (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
          }),
      });
    });
    (server as Server).keepAliveTimeout = (options.keepAliveSeconds ?? 65) * 1000;
    server.once('error', reject);
  });
}
