import type { Context, Hono } from 'hono';
import { DomainError } from '../services/errors.js';
import type { AppEnv } from './env.js';
import { problemResponse } from './problem.js';

/** A route the app answers: its method and a matcher for its path. */
interface KnownRoute {
  method: string;
  pattern: RegExp;
}

/** Hono's path syntax as a matcher: `:name` is one segment, a trailing `*` anything below. Exact otherwise. */
function matcherOf(path: string): RegExp {
  const body = path
    .split('/')
    .map((segment) =>
      segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/');
  return new RegExp(`^${body}$`);
}

/**
 * The methods the app answers on a path, read from the app's own routes (the operation table, platform and
 * OAuth routes, docs), so nothing is listed twice. Middleware (`ALL`) is not a route. HEAD is answered
 * wherever GET is.
 */
export function allowedMethods(app: Hono<AppEnv>): (pathname: string) => string[] {
  let known: KnownRoute[] | undefined;
  return (pathname) => {
    known ??= app.routes
      .filter((r) => r.method !== 'ALL')
      .map((r) => ({ method: r.method, pattern: matcherOf(r.path) }));
    const methods = new Set(known.filter((r) => r.pattern.test(pathname)).map((r) => r.method));
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  };
}

/**
 * The answer for a request no route took: 405 with `Allow` when the path is known under other methods
 * (RFC 9110 15.5.6), else 404 route-not-found.
 */
export function unroutedAnswer(app: Hono<AppEnv>): (c: Context<AppEnv>) => Response {
  const methodsOn = allowedMethods(app);
  return (c) => {
    const pathname = new URL(c.req.url).pathname;
    const allow = methodsOn(pathname);
    // A route of this method that answered "not found" itself (an unknown docs asset) is a 404, not a 405.
    const method = c.req.method === 'HEAD' ? 'GET' : c.req.method;
    if (allow.length > 0 && !allow.includes(method)) {
      const res = problemResponse(
        c,
        new DomainError(
          'method-not-allowed',
          `${pathname} does not answer ${c.req.method}; it answers ${allow.join(', ')}`,
          { allow },
        ),
      );
      res.headers.set('Allow', allow.join(', '));
      return res;
    }
    return problemResponse(c, new DomainError('route-not-found', `No operation answers ${c.req.method} ${pathname}`));
  };
}
