import type { Hono } from 'hono';
import type { AppEnv } from './env.js';

/** OAuth 2.0: `/oauth2/jwks`, `/oauth2/token`, `/oauth2/authorize`. */
export function mountOAuthRoutes(app: Hono<AppEnv>): void {
  app.get('/oauth2/jwks', async (c) => {
    const jwks = await c.get('services').auth.keys.jwks();
    c.header('Cache-Control', 'public, max-age=300');
    return c.json(jwks);
  });
}
