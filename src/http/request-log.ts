import type { Context } from 'hono';
import type { AppEnv } from './env.js';

/**
 * What an answered request leaves behind, taken from one reading of the request: its sample in the request
 * metrics (labelled with the operation the route set, the seed's operation id, so the label's values are a fixed
 * list whatever paths clients try, and its surface) and one JSON log line (id, method, path without the query,
 * which may carry identifiers, status, duration, operation, caller).
 */
export function recordRequest(c: Context<AppEnv>, elapsedMs: number): void {
  const services = c.get('services');
  const method = c.req.method;
  const status = c.res.status;
  const operationId = c.get('operationId');
  services.metrics.recordRequest({
    operation: operationId,
    surface: c.get('surface'),
    method,
    status,
    seconds: elapsedMs / 1000,
  });
  services.ctx.log.info('request', {
    requestId: c.get('requestId'),
    method,
    path: c.req.path,
    status,
    durationMs: Math.round(elapsedMs * 10) / 10,
    operationId,
    accountId: c.get('principal')?.accountId ?? undefined,
  });
}
