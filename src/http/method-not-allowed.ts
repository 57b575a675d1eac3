import type { Context, Hono } from 'hono';
import { DomainError } from '../services/errors.js';
import type { AppEnv } from './env.js';
import { problemResponse } from './problem.js';

/** A route the app answers: its method, its path, and a matcher for it. */
interface KnownRoute {
  method: string;
  path: string;
  pattern: RegExp;
}

/** A path with no parameter and no wildcard. */
const isStatic = (path: string) => !/[:*]/.test(path);

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
 * wherever GET is. A path some route names exactly (`/admin/subjects/create`) is that route's alone: a
 * parameterised route that would also match it (`/admin/subjects/{subjectId}`) does not answer there
 * ({@link shadowedBy}), so its methods are not listed.
 */
function allowedMethods(app: Hono<AppEnv>): (pathname: string) => string[] {
  let known: KnownRoute[] | undefined;
  return (pathname) => {
    known ??= app.routes
      .filter((r) => r.method !== 'ALL')
      .map((r) => ({ method: r.method, path: r.path, pattern: matcherOf(r.path) }));
    const exact = known.filter((r) => isStatic(r.path) && r.path === pathname);
    const answering = exact.length > 0 ? exact : known.filter((r) => r.pattern.test(pathname));
    const methods = new Set(answering.map((r) => r.method));
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  };
}

/**
 * For the route at `path` (Hono's form), the values of its one parameter that would make it a path another
 * route names exactly (`create` for `/admin/subjects/:subjectId` beside `/admin/subjects/create`): such a
 * request is not this route's, so it answers as if unrouted (405 naming what the exact path takes). The
 * documents state those values as excluded (`not: {enum}`).
 */
export function shadowedBy(path: string, staticPaths: readonly string[]): string[] {
  const segments = path.split('/');
  const params = segments.flatMap((s, i) => (s.startsWith(':') ? [i] : []));
  if (params.length !== 1 || segments.includes('*')) return [];
  const at = params[0]!;
  return (
    staticPaths
      .map((p) => p.split('/'))
      .filter((s) => s.length === segments.length && s.every((part, i) => i === at || part === segments[i]))
      .map((s) => s[at]!)
      // An empty segment (a path ending in `/`) never matches a parameter anyway.
      .filter((value, i, all) => value !== '' && all.indexOf(value) === i)
      .sort()
  );
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
