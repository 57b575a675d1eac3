import { randomSecret, sha256 } from '../../auth/password.js';
import {
  deleteRefreshTokensExpiredBefore,
  familyHasRevokedToken,
  findRefreshToken,
  findRefreshTokenClient,
  insertRefreshToken,
  markRefreshTokenReplaced,
  revokeFamilyRefreshTokens,
} from '../../db/repositories/auth/refresh-tokens.js';
import { deleteRevokedAccessTokensExpiredBefore } from '../../db/repositories/auth/revoked-tokens.js';
import type { Queryable } from '../../db/repositories/queryable.js';
import type { ServiceContext } from '../context.js';
import { invalidGrant } from './oauth-error.js';
import { credentialsChanged } from './credential-cache.js';

/**
 * Rotating refresh tokens (OAuth 2.0 Security BCP, section 4.14.2). Every use replaces the token with a new
 * one of the same family; presenting a replaced token means two parties hold the family (one of them stole
 * it), so the whole family is revoked. A family is one login: its id is the hash of the authorization code
 * that began it, which lets a replayed code find and revoke what it produced. Only SHA-256 hashes of the
 * tokens are stored.
 *
 * A family counts as revoked as soon as any of its rows is: that lets a revocation that races with the
 * issue of a new token (a code replayed while its first exchange is still running) still catch it, and it
 * is what the Bearer check asks (account-check.ts) so that access tokens of the family die too.
 */

interface RefreshGrant {
  accountId: number;
  clientId: string;
  /** The scope originally granted; narrower access tokens may be asked for, the family keeps this one. */
  scope: string;
  familyId: string;
  /** The account's credential version the family was won under. */
  credentialVersion: number;
}

/** Issue a new refresh token in a family. */
export async function issueRefreshToken(
  ctx: ServiceContext,
  grant: RefreshGrant,
  db: Queryable = ctx.db,
): Promise<string> {
  const token = randomSecret(32);
  await insertRefreshToken(db, {
    token_hash: await sha256(token),
    family_id: grant.familyId,
    account_id: grant.accountId,
    client_id: grant.clientId,
    scope: grant.scope,
    credential_version: grant.credentialVersion,
    expires_at: new Date(ctx.now().getTime() + ctx.config.BIMS_REFRESH_TOKEN_SECONDS * 1000),
    created_at: ctx.now(),
  });
  return token;
}

/** Expired rows are kept this long after expiry, then purged. */
const RETENTION_MS = 24 * 3600_000;

/**
 * Revoke every token of a family, and add a revoked marker row to it. The marker (whose hash is of a random
 * value nobody holds) outlives any token that could still be issued into the family by a request racing
 * with this one (a code replayed while its first exchange is still running, two concurrent refreshes), so
 * such a token is born revoked and stays so until it expires, even after older rows are purged.
 */
export async function revokeFamily(
  ctx: ServiceContext,
  familyId: string,
  accountId: number,
  clientId: string,
  reason: string,
): Promise<void> {
  const now = ctx.now();
  await revokeFamilyRefreshTokens(ctx.db, familyId, now);
  const outlives = new Date(now.getTime() + ctx.config.BIMS_REFRESH_TOKEN_SECONDS * 1000 + RETENTION_MS);
  await insertRefreshToken(ctx.db, {
    token_hash: await sha256(randomSecret(32)),
    family_id: familyId,
    account_id: accountId,
    client_id: clientId,
    scope: 'USER',
    expires_at: outlives,
    revoked_at: now,
    created_at: now,
  });
  // The family's access tokens end too: this process forgets that it was not revoked.
  credentialsChanged();
  ctx.log.warn('oauth token family revoked', { familyId: familyId.slice(0, 8), accountId, clientId, reason });
}

/**
 * Delete rows long expired; a revoked family keeps its marker until every token it could hold has expired, a
 * revoked access token its row until it expires (it no longer verifies after).
 */
export async function purgeExpiredRefreshTokens(ctx: ServiceContext): Promise<void> {
  await deleteRefreshTokensExpiredBefore(ctx.db, new Date(ctx.now().getTime() - RETENTION_MS));
  await deleteRevokedAccessTokensExpiredBefore(ctx.db, new Date(ctx.now().getTime() - RETENTION_MS));
}

/** The client a refresh token was issued to, so a public client may refresh without naming itself. */
export async function refreshTokenClient(ctx: ServiceContext, token: string): Promise<string | undefined> {
  return findRefreshTokenClient(ctx.db, await sha256(token));
}

/**
 * Exchange a refresh token for its successor. Fails with invalid_grant when the token is unknown, was issued
 * to another client, is expired or revoked; a replaced token additionally revokes its family.
 */
export async function rotateRefreshToken<T>(
  ctx: ServiceContext,
  token: string,
  clientId: string,
  /** The caller's own checks (account still enabled, scope), run before the token is replaced. */
  check: (grant: RefreshGrant) => Promise<T>,
): Promise<{ result: T; refreshToken: string }> {
  const hash = await sha256(token);
  const row = await findRefreshToken(ctx.db, hash);
  if (!row) throw invalidGrant('The refresh token is unknown');
  if (row.client_id !== clientId) throw invalidGrant('The refresh token was issued to another client');
  if (row.revoked_at !== null || (await familyHasRevokedToken(ctx.db, row.family_id)))
    throw invalidGrant('The refresh token has been revoked');
  const grant: RefreshGrant = {
    accountId: row.account_id,
    clientId: row.client_id,
    scope: row.scope,
    familyId: row.family_id,
    credentialVersion: row.credential_version,
  };
  const reused = () => revokeFamily(ctx, row.family_id, row.account_id, row.client_id, 'refresh token reused');
  if (row.replaced_at !== null) {
    await reused();
    throw invalidGrant('The refresh token was already used; every token of its family is now revoked');
  }
  if (row.expires_at.getTime() <= ctx.now().getTime()) throw invalidGrant('The refresh token has expired');
  // A refused request (say, a scope too wide) must not cost the client its token, hence checks first.
  const result = await check(grant);

  const refreshToken = await ctx.db.transaction().execute(async (trx) => {
    // The condition makes the replacement atomic: of two concurrent uses, exactly one wins.
    if (!(await markRefreshTokenReplaced(trx, hash, ctx.now()))) return null;
    return issueRefreshToken(ctx, grant, trx);
  });
  if (refreshToken === null) {
    await reused();
    throw invalidGrant('The refresh token was already used; every token of its family is now revoked');
  }
  return { result, refreshToken };
}
