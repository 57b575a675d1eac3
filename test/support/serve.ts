import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';

/** Serve an app's fetch on an ephemeral loopback port; returns its base URL and a stop function. */
export async function serveOnLoopback(fetch: (request: Request, env?: unknown) => Response | Promise<Response>) {
  return new Promise<{ url: string; stop: () => Promise<void> }>((resolve) => {
    const server = serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
      resolve({
        url: `http://127.0.0.1:${info.port}`,
        stop: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
