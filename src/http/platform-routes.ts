import type { Hono } from 'hono';
import { authoritiesOf } from '../services/auth/principal.js';
import { migrationsApplied } from '../db/connect.js';
import { LoginRequest } from '../schemas/auth.js';
import type { AppEnv } from './env.js';
import { clientAddress } from './client-address.js';
import { jsonAnswer } from './security-headers.js';
import { validate } from './validation.js';
import { readJsonBody } from './json-body.js';
import { mountOAuthRoutes } from './oauth-routes.js';

/**
 * Routes outside the three surfaces: liveness and readiness probes (no credentials), `POST /login`, and the
 * OAuth 2.0 endpoints.
 */
export function mountPlatformRoutes(app: Hono<AppEnv>): void {
  app.get('/health', (c) => jsonAnswer(c, { status: 'UP' }));

  app.get('/ready', async (c) => {
    const { ctx } = c.get('services');
    try {
      const applied = await migrationsApplied(ctx.db);
      if (!applied) return c.json({ status: 'DOWN', database: 'UP', migrations: 'PENDING' }, 503);
      return c.json({ status: 'UP', database: 'UP', migrations: 'APPLIED' });
    } catch {
      return c.json({ status: 'DOWN', database: 'DOWN' }, 503);
    }
  });

  // Login takes its credentials as JSON {username, password} or, for clients that only speak Basic, as a
  // Basic header with no body.
  app.post('/login', async (c) => {
    c.set('operationId', 'login');
    const services = c.get('services');
    const header = c.req.header('authorization');
    const hasBody = (c.req.header('content-length') ?? '0') !== '0' || c.req.header('transfer-encoding') !== undefined;
    let principal;
    if (header && !hasBody) {
      principal = await services.auth.authenticate(header, clientAddress(c));
    } else {
      const body = validate(LoginRequest, await readJsonBody(c.req.raw), 'body');
      principal = await services.auth.checkPassword(body.username, body.password, clientAddress(c));
    }
    return c.json({
      authenticationType: principal.via === 'bearer' ? 'BEARER' : 'BASIC',
      username: principal.username,
      role: principal.role,
      authorities: authoritiesOf(principal.role),
    });
  });

  mountOAuthRoutes(app);
}
