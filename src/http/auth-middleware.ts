import type { Context, MiddlewareHandler } from 'hono';
import { roleCovers } from '../services/auth/principal.js';
import { DomainError } from '../services/errors.js';
import type { Role, Surface } from '../auth/roles.js';
import type { AppEnv } from './env.js';
import { clientAddress } from './client-address.js';

/**
 * Authenticate the caller (Basic or Bearer) and demand a role: 401 with `WWW-Authenticate` for missing or
 * bad credentials, 403 when the credentials are good but the role too low. For a read whose entry says
 * `read.checksAccountInStatement` (`defers`), a Bearer token's account check is left for the read's statement
 * (on PostgreSQL: one round trip per read instead of two; services/auth/account-check.ts).
 */
export function requireRole(
  role: Role,
  surface: Surface,
  operationId: string,
  defers = false,
): MiddlewareHandler<AppEnv> {
  const forbidden = (held: Role) =>
    new DomainError(
      'forbidden',
      `This operation on the ${surface} surface needs scope ${role}; the credentials hold ${held}`,
      { requiredScope: role },
    );
  return async (c, next) => {
    c.set('surface', surface);
    c.set('operationId', operationId);
    const auth = c.get('services').auth;
    const header = requestHeader(c, 'authorization');
    const deferred = defers ? await auth.deferAccountCheck(header, role, forbidden) : undefined;
    if (deferred) {
      // The account check goes with the read's statement; runOperation sees that it is made before answering.
      c.set('principal', deferred.principal);
      return next();
    }
    const principal = await auth.authenticate(header, clientAddress(c));
    c.set('principal', principal);
    if (!roleCovers(principal.role, role)) throw forbidden(principal.role);
    await next();
  };
}

/** A request header through `everyRequest`'s cheap reader when it ran (see `AppEnv`), else Hono's. */
function requestHeader(c: Context<AppEnv>, name: string): string | undefined {
  const read = c.get('readHeader');
  return read ? read(c, name) : c.req.header(name);
}

/**
 * For the few operations declared `open`: no credentials are read or demanded (a request carrying some is
 * forwarded as it is). The handler sees an anonymous principal with the weakest role; nothing open reads it,
 * it only keeps logs and the handler signature uniform.
 */
export function withoutCredentials(surface: Surface, operationId: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set('surface', surface);
    c.set('operationId', operationId);
    c.set('principal', { accountId: null, username: 'anonymous', role: 'USER', via: 'basic' });
    await next();
  };
}
