import { sha256 } from '../../auth/password.js';
import { findRefreshToken } from '../../db/repositories/auth/refresh-tokens.js';
import { insertRevokedAccessToken } from '../../db/repositories/auth/revoked-tokens.js';
import type { ServiceContext } from '../context.js';
import type { AuthService } from './auth-service.js';
import { authenticateClient, invalidClient, presentedClient, throttled, type PresentedClient } from './client-auth.js';
import { credentialsChanged } from './credential-cache.js';
import { OAuthError, invalidRequest } from './oauth-error.js';
import { findClient } from './oauth-clients.js';
import { revokeFamily } from './refresh-tokens.js';
import type { TokenInput } from './oauth.js';

/**
 * Token revocation (RFC 7009) for clients that log out. The client authenticates as at the token endpoint:
 * a registered confidential client with its secret, a public client (bims-cli, bims-docs) by its id alone, or
 * an account with its user name and password (the "client" of a client_credentials token it obtained). It may
 * revoke only tokens issued to it (RFC 7009 2.1).
 *
 * - A refresh token revokes its whole family: every refresh token of the login, and (through the `sid` each
 *   access token of the login carries, checked on every request) every access token of it.
 * - An access token is recorded by its `jti` until it expires; the Bearer check of every node asks for it in
 *   the statement it already makes, so the token is refused everywhere from the next request on.
 * - A token that is unknown, expired or not ours is answered as revoked (RFC 7009 2.2): there is nothing to do.
 */
export async function revokeToken(deps: { ctx: ServiceContext; auth: AuthService }, input: TokenInput): Promise<void> {
  const token = input.params.token;
  if (!token) throw invalidRequest('token is required');
  const presented = presentedClient(input.params, input.basic);
  if (!presented) throw invalidClient(presented, 'Client authentication or client_id is required');
  const clientId = await authenticatedClientId(deps, presented, input.address);
  const hint = input.params.token_type_hint;
  // The hint says where to look first (RFC 7009 2.1); a token not found there is looked for as the other kind.
  const kinds = hint === 'access_token' ? [revokeAccess, revokeRefresh] : [revokeRefresh, revokeAccess];
  for (const revoke of kinds) if (await revoke(deps, token, clientId)) return;
}

const notYours = () => new OAuthError('unauthorized_client', 'The token was issued to another client');

async function revokeRefresh(deps: { ctx: ServiceContext }, token: string, clientId: string): Promise<boolean> {
  const row = await findRefreshToken(deps.ctx.db, await sha256(token));
  if (!row) return false;
  if (row.client_id !== clientId) throw notYours();
  await revokeFamily(deps.ctx, row.family_id, row.account_id, row.client_id, 'revoked by its client (RFC 7009)');
  return true;
}

async function revokeAccess(
  deps: { ctx: ServiceContext; auth: AuthService },
  token: string,
  clientId: string,
): Promise<boolean> {
  const claims = await deps.auth.verifiedClaims(token);
  if (!claims || typeof claims.jti !== 'string' || typeof claims.exp !== 'number') return false;
  if (claims.client_id !== clientId) throw notYours();
  await insertRevokedAccessToken(deps.ctx.db, claims.jti, new Date(claims.exp * 1000));
  // This node's cached verdicts on the token go; other nodes ask the database on every request.
  credentialsChanged();
  deps.ctx.log.info('oauth access token revoked', { clientId, jti: claims.jti.slice(0, 6) });
  return true;
}

/**
 * The client the request authenticates as (throttled like every secret check): a registered client's id, or
 * the user name of an account that presented its password as client credentials.
 */
async function authenticatedClientId(
  deps: { ctx: ServiceContext; auth: AuthService },
  presented: PresentedClient,
  address: string,
): Promise<string> {
  if (await findClient(deps.ctx, presented.clientId))
    return (await authenticateClient(deps.ctx, deps.auth, presented, null, address)).clientId;
  if (presented.secret === undefined) throw invalidClient(presented, 'Client authentication failed');
  const secret = presented.secret;
  const principal = await throttled(presented, async () => {
    try {
      return await deps.auth.checkPassword(presented.clientId, secret, address);
    } catch (error) {
      // An account password sent in Basic without the form-encoding RFC 6749 asks for (curl -u does this).
      if (!presented.raw) throw error;
      return deps.auth.checkPassword(presented.raw.clientId, presented.raw.secret, address);
    }
  });
  return principal.username;
}
