import type { Queryable } from '../queryable.js';

/** Access tokens revoked before their expiry (table `revoked_access_tokens`, RFC 7009), by `jti`. */

/** Record a revoked token until it expires; revoking it again changes nothing. */
export async function insertRevokedAccessToken(db: Queryable, jti: string, expiresAt: Date): Promise<void> {
  await db
    .insertInto('revoked_access_tokens')
    .values({ jti, expires_at: expiresAt })
    .onConflict((oc) => oc.column('jti').doNothing())
    .execute();
}

/** Forget tokens that have expired anyway (they no longer verify). */
export async function deleteRevokedAccessTokensExpiredBefore(db: Queryable, before: Date): Promise<void> {
  await db.deleteFrom('revoked_access_tokens').where('expires_at', '<', before).execute();
}
