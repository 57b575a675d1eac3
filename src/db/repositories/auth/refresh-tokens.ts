import type { Insertable, Selectable } from 'kysely';
import type { Database } from '../../tables.js';
import { asDate } from '../decode.js';
import type { Queryable } from '../queryable.js';

/** Refresh tokens (table `refresh_tokens`), keyed by the SHA-256 of the token, grouped in families (logins). */

type RefreshTokenRow = Selectable<Database['refresh_tokens']>;

const orNull = (value: Date | string | null) => (value === null ? null : asDate(value));

export async function insertRefreshToken(db: Queryable, token: Insertable<Database['refresh_tokens']>): Promise<void> {
  await db.insertInto('refresh_tokens').values(token).execute();
}

export async function findRefreshToken(db: Queryable, tokenHash: string): Promise<RefreshTokenRow | undefined> {
  const row = await db.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  return (
    row && {
      ...row,
      expires_at: asDate(row.expires_at),
      created_at: asDate(row.created_at),
      replaced_at: orNull(row.replaced_at),
      revoked_at: orNull(row.revoked_at),
    }
  );
}

/** The client a token was issued to. */
export async function findRefreshTokenClient(db: Queryable, tokenHash: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('refresh_tokens')
    .select('client_id')
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
  return row?.client_id;
}

/** True when any token of the family has been revoked. */
export async function familyHasRevokedToken(db: Queryable, familyId: string): Promise<boolean> {
  const row = await db
    .selectFrom('refresh_tokens')
    .select('token_hash')
    .where('family_id', '=', familyId)
    .where('revoked_at', 'is not', null)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Mark a token replaced by its successor, if it is neither replaced nor revoked yet: one conditional update,
 * so of two concurrent uses exactly one gets true.
 */
export async function markRefreshTokenReplaced(db: Queryable, tokenHash: string, at: Date): Promise<boolean> {
  const won = await db
    .updateTable('refresh_tokens')
    .set({ replaced_at: at })
    .where('token_hash', '=', tokenHash)
    .where('replaced_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(won.numUpdatedRows) > 0;
}

/** Revoke the unrevoked tokens of a family (earlier revocation times are kept). */
export async function revokeFamilyRefreshTokens(db: Queryable, familyId: string, at: Date): Promise<void> {
  await db
    .updateTable('refresh_tokens')
    .set({ revoked_at: at })
    .where('family_id', '=', familyId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Revoke the unrevoked tokens issued to a client. */
export async function revokeClientRefreshTokens(db: Queryable, clientId: string, at: Date): Promise<void> {
  await db
    .updateTable('refresh_tokens')
    .set({ revoked_at: at })
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Revoke the unrevoked tokens of an account. */
export async function revokeAccountRefreshTokens(db: Queryable, accountId: number, at: Date): Promise<void> {
  await db
    .updateTable('refresh_tokens')
    .set({ revoked_at: at })
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .execute();
}

export async function deleteRefreshTokensExpiredBefore(db: Queryable, before: Date): Promise<void> {
  await db.deleteFrom('refresh_tokens').where('expires_at', '<', before).execute();
}
