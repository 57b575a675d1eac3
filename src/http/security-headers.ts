import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './env.js';

/**
 * Security headers on every response, and CORS closed unless origins are configured (comma-separated
 * BIMS_CORS_ORIGINS, or `*`). The docs page needs inline styles from Swagger UI, hence its looser CSP.
 */
export function securityHeaders(corsOrigins: string): MiddlewareHandler<AppEnv> {
  const allowed = corsOrigins.split(',').map((o) => o.trim()).filter(Boolean);
  return async (c, next) => {
    const origin = c.req.header('origin');
    const corsOk = origin !== undefined && (allowed.includes('*') || allowed.includes(origin));
    if (c.req.method === 'OPTIONS' && corsOk && c.req.header('access-control-request-method')) {
      return new Response(null, {
        status: 204,
        headers: {
          'Access-Control-Allow-Origin': origin!,
          'Access-Control-Allow-Methods': 'GET, POST, PUT, DELETE, PATCH',
          'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept, X-Request-Id',
          'Access-Control-Max-Age': '600',
          Vary: 'Origin',
        },
      });
    }
    await next();
    const h = c.res.headers;
    h.set('X-Content-Type-Options', 'nosniff');
    h.set('X-Frame-Options', 'DENY');
    h.set('Referrer-Policy', 'no-referrer');
    h.set('Cross-Origin-Opener-Policy', 'same-origin');
    h.set('Permissions-Policy', 'camera=(), microphone=(), geolocation=()');
    if (!h.has('Content-Security-Policy')) h.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
    if (!h.has('Cache-Control')) h.set('Cache-Control', 'no-store');
    h.set('X-Request-Id', c.get('requestId'));
    // Names the seed operation that answered, so clients and tests can tell which route matched.
    const operationId = c.get('operationId');
    if (operationId) h.set('X-Bims-Operation', operationId);
    if (corsOk) {
      h.set('Access-Control-Allow-Origin', origin!);
      h.set('Access-Control-Expose-Headers', 'X-Request-Id, X-Bims-Operation, WWW-Authenticate, Retry-After');
      h.append('Vary', 'Origin');
    }
  };
}
