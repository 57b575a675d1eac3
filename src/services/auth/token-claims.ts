import type { Role } from '../../auth/roles.js';
import type { TokenAccountRow } from '../../db/repositories/auth/token-account.js';
import { DomainError } from '../errors.js';
import type { Principal } from './principal.js';

/**
 * What our access tokens claim and what a claim is worth: the claims of a verified token read into whose it is
 * (an account or an OAuth client) and at most what it may do, and an account token's principal once its account
 * row is known. Pure functions: AuthService verifies the signature and reads the rows.
 */

export const unauthorized = (detail: string, bearerError?: string) =>
  new DomainError('unauthorized', detail, bearerError ? { bearerError } : {});

/** What a verified access token of an account claims; its account is still to be checked. */
export interface AccountClaims {
  kind: 'account';
  accountId: number;
  sid: string | null;
  /** The token's own id, which a revocation (RFC 7009) names. */
  jti: string | null;
  credentialVersion: number | undefined;
  scope: Role;
  clientId: string | undefined;
  username: string;
}

/** The principal of an account token whose account row is `account`; throws 401 when the row ends the token. */
export function accountPrincipal(claims: AccountClaims, account: TokenAccountRow | undefined): Principal {
  if (!account || !account.enabled)
    throw unauthorized('The account behind this token is gone or disabled', 'invalid_token');
  if (account.credential_version !== claims.credentialVersion) {
    throw unauthorized("The account's password, role or status changed after this token was issued", 'invalid_token');
  }
  if (account.revoked === true)
    throw unauthorized('This token, or the login behind it, has been revoked', 'invalid_token');
  return {
    accountId: account.id,
    username: account.username,
    role: weaker(claims.scope, account.role),
    via: 'bearer',
    clientId: claims.clientId,
  };
}

/** The claim carrying the account's credential version (private to BIMS: only BIMS reads its own tokens). */
export const CREDENTIAL_VERSION_CLAIM = 'cv';

/** A token's credential version; tokens made before versions existed carry none and count as version 1. */
function credentialVersionOf(payload: { [claim: string]: unknown }): number | undefined {
  const value = payload[CREDENTIAL_VERSION_CLAIM];
  if (value === undefined) return 1;
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}

const order: Role[] = ['USER', 'ADJUDICATOR', 'ADMIN'];
export function weaker(a: Role, b: Role): Role {
  return order[Math.min(order.indexOf(a), order.indexOf(b))]!;
}

/** What a verified access token of an OAuth client claims; its client is still to be checked. */
interface ClientClaims {
  kind: 'client';
  clientId: string;
  scope: Role;
  jti: string | null;
}

export type TokenClaims = AccountClaims | ClientClaims;

/** The claims of a token whose signature verified (null when it did not); throws 401 for claims we never issue. */
export function claimsOf(payload: { [claim: string]: unknown } | null): TokenClaims {
  if (!payload || typeof payload.sub !== 'string')
    throw unauthorized('The access token is invalid or expired', 'invalid_token');
  const scope = payload.scope;
  if (scope !== 'ADMIN' && scope !== 'ADJUDICATOR' && scope !== 'USER')
    throw unauthorized('The access token has no scope', 'invalid_token');
  const clientId = typeof payload.client_id === 'string' ? payload.client_id : undefined;
  if (payload.sub.startsWith('account:')) {
    return {
      kind: 'account',
      accountId: Number(payload.sub.slice('account:'.length)),
      sid: typeof payload.sid === 'string' ? payload.sid : null,
      jti: typeof payload.jti === 'string' ? payload.jti : null,
      credentialVersion: credentialVersionOf(payload),
      scope,
      clientId,
      username: typeof payload.preferred_username === 'string' ? payload.preferred_username : payload.sub,
    };
  }
  if (payload.sub.startsWith('client:'))
    return {
      kind: 'client',
      clientId: payload.sub.slice('client:'.length),
      scope,
      jti: typeof payload.jti === 'string' ? payload.jti : null,
    };
  throw unauthorized('The access token has an unknown subject', 'invalid_token');
}
