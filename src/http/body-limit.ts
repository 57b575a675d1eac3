import type { MiddlewareHandler } from 'hono';
import { bodyLimitError, payloadTooLarge } from '../services/payload-too-large.js';
import type { AppEnv } from './env.js';

// Readers of a body recognise its 413 with bodyLimitError, which lives below the HTTP layer for the dashboard proxy.
export { bodyLimitError };

/**
 * Refuse request bodies over `maxBytes` with a 413 problem, without buffering anything before authentication.
 *
 * A declared Content-Length over the limit is refused at once. A body without one (chunked, or a stream from
 * another runtime) is counted while the handler reads it, after authentication and validation of the rest:
 * the stream fails with the 413 error as soon as the count passes the limit. (Hono's bodyLimit reads such a
 * body whole, up to the limit, before anything else runs, so a stranger could make every connection hold
 * that much memory.)
 */
export function bodyLimit(maxBytes: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    // A GET or HEAD has no body to any handler (the runtimes give such a request none), and asking for one
    // is not free: on Node it makes the adapter build a whole `Request` that the read would not need.
    if (withoutBody(c.req.method)) return next();
    const request = c.req.raw;
    if (!request.body) return next();
    const declared = request.headers.get('content-length');
    if (declared !== null && !request.headers.has('transfer-encoding')) {
      if (Number(declared) > maxBytes) throw payloadTooLarge(maxBytes);
      return next();
    }
    let seen = 0;
    const counted = request.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > maxBytes) controller.error(payloadTooLarge(maxBytes));
          else controller.enqueue(chunk);
        },
      }),
    );
    c.req.raw = new Request(request, { body: counted, duplex: 'half' } as RequestInit);
    return next();
  };
}

/** Methods whose requests reach the handlers without a body: the body middleware leave them alone. */
export function withoutBody(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}
