import type { Hono } from 'hono';
import { issueTokens } from '../services/auth/oauth.js';
import { revokeToken } from '../services/auth/revoke.js';
import type { AppEnv } from './env.js';
import { mountAuthorizeRoutes } from './authorize-routes.js';
import { mountOAuthDiscovery } from './oauth-discovery.js';
import { clientAddress } from './client-address.js';
import { NO_STORE, OAuthError, basicClientCredentials, oauthErrorResponse, readTokenParams } from './oauth-request.js';

/** OAuth 2.0: `/oauth2/jwks`, `/oauth2/token`, `/oauth2/revoke`, `/oauth2/authorize` and the discovery document. */
export function mountOAuthRoutes(app: Hono<AppEnv>): void {
  app.get('/oauth2/jwks', async (c) => {
    const jwks = await c.get('services').auth.keys.jwks();
    c.header('Cache-Control', 'public, max-age=300');
    return c.json(jwks);
  });

  // RFC 6749 3.2: errors are `{error, error_description}` JSON, not problem+json, because that is what
  // OAuth client libraries parse. Only faults of ours fall through to the app's 500 handler.
  app.post('/oauth2/token', async (c) => {
    c.set('operationId', 'oauth2Token');
    const services = c.get('services');
    try {
      const params = await readTokenParams(c.req.raw);
      const response = await issueTokens(services, {
        params,
        basic: basicClientCredentials(c.req.header('authorization')),
        address: clientAddress(c),
      });
      return c.json(response, 200, NO_STORE);
    } catch (error) {
      if (error instanceof OAuthError) return oauthErrorResponse(error);
      throw error;
    }
  });

  // RFC 7009: 200 with no body for a revoked token and for one there was nothing to revoke (unknown, expired).
  app.post('/oauth2/revoke', async (c) => {
    c.set('operationId', 'oauth2Revoke');
    const services = c.get('services');
    try {
      const params = await readTokenParams(c.req.raw);
      await revokeToken(services, {
        params,
        basic: basicClientCredentials(c.req.header('authorization')),
        address: clientAddress(c),
      });
      return c.body(null, 200, NO_STORE);
    } catch (error) {
      if (error instanceof OAuthError) return oauthErrorResponse(error);
      throw error;
    }
  });

  mountAuthorizeRoutes(app);
  mountOAuthDiscovery(app);
}
