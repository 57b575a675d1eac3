import { Hono } from 'hono';
import { bearerMatches } from './auth.js';
import type { JanusSupervisor } from './janus-supervisor.js';
import type { Dongles } from './dongles/dongles.js';
import { mountDongleRoutes } from './dongles/routes.js';
import { mountDecoderRoutes, type DecoderCaps, type DecoderLog } from './decoders/routes.js';
import type { SidecarJanusReport } from '../protocols/sidecar.js';

/**
 * The sidecar's HTTP interface, for the API only: it listens on 127.0.0.1 and every route but the liveness
 * probe demands the shared Bearer token. The API then talks to Janus directly on loopback with the URLs and
 * secrets it learns here, so media signalling does not take an extra hop through this process. The licence
 * dongles are served here too (see dongles/routes.ts).
 */
export function createSidecarApp(deps: {
  token: string;
  janus: JanusSupervisor;
  dongles?: Dongles;
  log?: DecoderLog;
  /** Decoders per owner and in all (BIMS_DECODERS_PER_ACCOUNT, BIMS_DECODERS_TOTAL). */
  decoderCaps: DecoderCaps;
}) {
  const app = new Hono();
  /** Liveness for process managers: says nothing about Janus and needs no token. */
  app.get('/health', (c) => c.json({ status: 'ok' }));
  app.use('/v1/*', async (c, next) => {
    if (!bearerMatches(c.req.header('authorization'), deps.token)) {
      return c.json({ error: 'unauthorized', detail: 'a valid Bearer token is required' }, 401, {
        'WWW-Authenticate': 'Bearer realm="bims-sidecar"',
      });
    }
    await next();
  });
  /** Janus's state, its URLs on loopback and its secrets. */
  app.get('/v1/janus', (c) =>
    c.json(deps.janus.snapshot() satisfies SidecarJanusReport, 200, { 'Cache-Control': 'no-store' }),
  );
  if (deps.dongles) mountDongleRoutes(app, deps.dongles);
  // The decoders of capture sessions: the RTP Janus forwards on loopback, decoded to frames (decoders/routes.ts).
  const decoders = mountDecoderRoutes(app, {
    log: deps.log ?? { info: () => {}, warn: () => {} },
    caps: deps.decoderCaps,
  });
  app.notFound((c) => c.json({ error: 'not-found' }, 404));
  return Object.assign(app, { stopDecoders: decoders.stopAll });
}
