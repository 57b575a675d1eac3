import type { Context, MiddlewareHandler, Next } from 'hono';
import type { Services } from '../services/index.js';
import { bodyLimit, bodyLimitError, withoutBody } from './body-limit.js';
import type { AppEnv } from './env.js';
import { problemResponse } from './problem.js';
import { recordRequest } from './request-log.js';
import { securityHeaders, type HeaderReader } from './security-headers.js';
import { unreadBody } from './unread-body.js';

interface EveryRequestOptions {
  services: Services;
  /** BIMS_CORS_ORIGINS: comma-separated origins, `*`, or empty (CORS closed). */
  corsOrigins: string;
  /** BIMS_MAX_BODY_BYTES. */
  maxBodyBytes: number;
  /** The caller's address from the runtime's own bindings. */
  clientAddress?: (request: Request, env: unknown) => string;
  /**
   * A request header by its lower-case name, read the runtime's cheapest way. On Node, `request.headers` makes
   * the adapter build a whole `Headers` object from the raw header list, where the `IncomingMessage` already
   * holds them as a record. Absent: `request.headers.get(name)`.
   */
  readHeader?: (request: Request, env: unknown, name: string) => string | undefined;
}

/**
 * Everything each request goes through besides its route, as one middleware: the request id, the caller's
 * address, the security and CORS headers, the body limit and the drain of a body nobody read (requests with
 * bodies only), then the request's metric and log line from one record of it.
 *
 * One layer rather than five: each `app.use` layer is an async call, a promise and a closure per request in
 * Hono's chain, which was most of what `/health` cost besides the socket. The parts keep their own files
 * (security-headers, body-limit, unread-body, request-log); this says in which order they run:
 *
 * 1. request id (`X-Request-Id` as sent, at most 128 characters, else a new UUID), services, client address;
 * 2. security headers noted for the answer; an allowed CORS preflight is answered here (nothing below runs);
 * 3. for methods with a body: the declared-length check (413) and the counting stream, around the route; after
 *    it, a body nobody read is drained or the connection closed (unread-body.ts); GET and HEAD skip all that;
 * 4. the route;
 * 5. the headers the answer lacks;
 * 6. metric and log line, whatever happened above.
 */
export function everyRequest(options: EveryRequestOptions): MiddlewareHandler<AppEnv> {
  const { services, clientAddress, readHeader } = options;
  const headers = securityHeaders(options.corsOrigins);
  const limit = bodyLimit(options.maxBodyBytes);
  const drain = unreadBody();
  const header: HeaderReader = readHeader
    ? (c, name) => readHeader(c.req.raw, c.env, name)
    : (c, name) => c.req.header(name);

  // The body limit refuses by throwing its 413; answered here, so that the drain around it still sees the answer
  // (as when it was a layer of its own and Hono's chain caught the error at its level).
  const limited = async (c: Context<AppEnv>, next: Next) => {
    try {
      await limit(c, next);
    } catch (error) {
      const tooLarge = bodyLimitError(error);
      if (!tooLarge) throw error;
      c.res = problemResponse(c, tooLarge);
    }
  };

  return async (c, next) => {
    const started = performance.now();
    c.set('services', services);
    c.set('readHeader', header);
    c.set('requestId', header(c, 'x-request-id')?.slice(0, 128) || crypto.randomUUID());
    c.set('clientAddress', clientAddress?.(c.req.raw, c.env) ?? 'unknown');
    try {
      const preflight = headers.before(c, header);
      if (preflight) c.res = preflight;
      else if (withoutBody(c.req.method)) await next();
      else await drain(c, () => limited(c, next));
      headers.after(c);
    } finally {
      recordRequest(c, performance.now() - started);
    }
  };
}
