import { randomSecret, sha256 } from '../../auth/password.js';
import {
  deleteAuthorizationCodesExpiredBefore,
  findAuthorizationCode,
  insertAuthorizationCode,
  markAuthorizationCodeUsed,
} from '../../db/repositories/auth/authorization-codes.js';
import type { ServiceContext } from '../context.js';
import { invalidGrant } from './oauth-error.js';
import { verifierMatches } from './pkce.js';
import { purgeExpiredRefreshTokens, revokeFamily } from './refresh-tokens.js';

/**
 * Authorization codes: single use, 60 seconds, bound to client, redirect URI and PKCE challenge; stored as
 * SHA-256 hashes. The hash also names the refresh-token family the code begins, so a replayed code can
 * revoke what its first redemption produced (RFC 6749 4.1.2).
 */

const CODE_LIFETIME_SECONDS = 60;
/** Used and expired codes are kept this long so that a late replay is still recognised and acted on. */
const CODE_RETENTION_MS = 24 * 3600_000;

interface CodeGrant {
  clientId: string;
  accountId: number;
  redirectUri: string;
  codeChallenge: string;
  scope: string;
  /** The account's credential version when it signed in. */
  credentialVersion: number;
}

/** Issue a code for an approved authorization request. */
export async function issueCode(ctx: ServiceContext, grant: CodeGrant): Promise<string> {
  const code = randomSecret(32);
  const now = ctx.now();
  // Housekeeping rides on logins, which are rare enough to make it cheap and frequent enough to bound the tables.
  await deleteAuthorizationCodesExpiredBefore(ctx.db, new Date(now.getTime() - CODE_RETENTION_MS));
  await purgeExpiredRefreshTokens(ctx);
  await insertAuthorizationCode(ctx.db, {
    code_hash: await sha256(code),
    client_id: grant.clientId,
    account_id: grant.accountId,
    redirect_uri: grant.redirectUri,
    code_challenge: grant.codeChallenge,
    scope: grant.scope,
    credential_version: grant.credentialVersion,
    expires_at: new Date(now.getTime() + CODE_LIFETIME_SECONDS * 1000),
  });
  return code;
}

/**
 * Redeem a code. Every check comes before the code is consumed, so that someone who intercepted a code but
 * lacks the verifier cannot burn it; the consumption itself is one conditional update, so of two concurrent
 * redemptions exactly one wins and the other counts as a replay.
 *
 * `familyId`, handed to `check`, is the id the refresh tokens issued from the code must carry.
 */
export async function redeemCode<T>(
  ctx: ServiceContext,
  input: { code: string; clientId: string; redirectUri: string; codeVerifier: string },
  /** The caller's own checks (account still enabled, scope), run before the code is consumed. */
  check: (grant: { accountId: number; scope: string; familyId: string; credentialVersion: number }) => Promise<T>,
): Promise<T> {
  const hash = await sha256(input.code);
  const row = await findAuthorizationCode(ctx.db, hash);
  if (!row) throw invalidGrant('The authorization code is unknown');
  if (row.client_id !== input.clientId) throw invalidGrant('The authorization code was issued to another client');
  const replayed = async () => {
    await revokeFamily(ctx, hash, row.account_id, row.client_id, 'authorization code reused');
    return invalidGrant('The authorization code was already used; the tokens issued from it are now revoked');
  };
  if (row.used_at !== null) throw await replayed();
  if (row.expires_at.getTime() <= ctx.now().getTime()) throw invalidGrant('The authorization code has expired');
  if (row.redirect_uri !== input.redirectUri)
    throw invalidGrant('redirect_uri does not match the one of the authorization request');
  if (!(await verifierMatches(input.codeVerifier, row.code_challenge)))
    throw invalidGrant('code_verifier does not match the code_challenge');
  const result = await check({
    accountId: row.account_id,
    scope: row.scope,
    familyId: hash,
    credentialVersion: row.credential_version,
  });
  if (!(await markAuthorizationCodeUsed(ctx.db, hash, ctx.now()))) throw await replayed();
  return result;
}
