import type { MiddlewareHandler } from 'hono';
import { roleCovers } from '../auth/principal.js';
import { DomainError } from '../services/errors.js';
import type { Role, Surface } from '../auth/roles.js';
import type { AppEnv } from './env.js';
import { clientAddress } from './client-address.js';

/**
 * Authenticate the caller (Basic or Bearer) and demand a role: 401 with `WWW-Authenticate` for missing or
 * bad credentials, 403 when the credentials are good but the role too low.
 */
export function authorise(role: Role, surface: Surface, operationId: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set('surface', surface);
    c.set('operationId', operationId);
    const principal = await c.get('services').auth.authenticate(c.req.header('authorization'), clientAddress(c));
    c.set('principal', principal);
    if (!roleCovers(principal.role, role)) {
      throw new DomainError('forbidden', `This operation on the ${surface} surface needs scope ${role}; the credentials hold ${principal.role}`, { requiredScope: role });
    }
    await next();
  };
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
