import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';

/**
 * Serve an app's fetch on an ephemeral loopback port; returns its base URL and a stop function. `hostname`:
 * another local address instead (e.g. the host end of the media test's veth link, for a browser in its namespace).
 */
export async function serveOnLoopback(
  fetch: (request: Request, env?: unknown) => Response | Promise<Response>,
  hostname = '127.0.0.1',
) {
  return new Promise<{ url: string; stop: () => Promise<void> }>((resolve) => {
    const server = serve({ fetch, port: 0, hostname }, (info: AddressInfo) => {
      resolve({
        url: `http://${hostname}:${info.port}`,
        stop: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
