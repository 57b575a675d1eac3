import type { Hono } from 'hono';
import { roleCovers } from '../services/auth/principal.js';
import { safeEqual } from '../auth/safe-equal.js';
import { DomainError } from '../services/errors.js';
import { PROMETHEUS_TEXT } from '../services/metrics/prometheus.js';
import { clientAddress } from './client-address.js';
import type { AppEnv } from './env.js';

/**
 * `GET /metrics`: the Prometheus text exposition (docs/metrics.md). For an ADMIN (Basic or Bearer, as on the
 * admin surface), or for a scraper holding BIMS_METRICS_TOKEN as its Bearer token, so a Prometheus server
 * needs no account; 401 without credentials, 403 for an account below ADMIN.
 */
export function mountMetrics(app: Hono<AppEnv>): void {
  app.get('/metrics', async (c) => {
    c.set('operationId', 'metrics');
    const services = c.get('services');
    const header = c.req.header('authorization');
    const token = services.ctx.config.BIMS_METRICS_TOKEN;
    const presented = /^bearer\s+(.+)$/i.exec(header ?? '')?.[1]?.trim();
    if (!(token && presented && safeEqual(presented, token))) {
      const principal = await services.auth.authenticate(header, clientAddress(c));
      c.set('principal', principal);
      if (!roleCovers(principal.role, 'ADMIN')) {
        throw new DomainError(
          'forbidden',
          `The metrics need scope ADMIN (or the metrics token); the credentials hold ${principal.role}`,
          { requiredScope: 'ADMIN' },
        );
      }
    }
    return c.body(await services.metrics.render(), 200, {
      'Content-Type': PROMETHEUS_TEXT,
      'Cache-Control': 'no-store',
    });
  });
}
