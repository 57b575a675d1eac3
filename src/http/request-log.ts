import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './env.js';

/** One JSON line per request: id, method, path (no query: it may carry identifiers), status, duration, caller. */
export function requestLog(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const principal = c.get('principal');
    c.get('services').ctx.log.info('request', {
      requestId: c.get('requestId'),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      operationId: c.get('operationId'),
      accountId: principal?.accountId ?? undefined,
    });
  };
}
