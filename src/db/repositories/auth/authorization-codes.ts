import type { Insertable, Selectable } from 'kysely';
import type { Database } from '../../tables.js';
import { asDate } from '../decode.js';
import type { Queryable } from '../queryable.js';

/** Authorization codes (table `oauth_codes`), keyed by the SHA-256 of the code. */

type AuthorizationCodeRow = Selectable<Database['oauth_codes']>;

export async function insertAuthorizationCode(db: Queryable, code: Insertable<Database['oauth_codes']>): Promise<void> {
  await db.insertInto('oauth_codes').values(code).execute();
}

export async function findAuthorizationCode(
  db: Queryable,
  codeHash: string,
): Promise<AuthorizationCodeRow | undefined> {
  const row = await db.selectFrom('oauth_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
  return (
    row && { ...row, expires_at: asDate(row.expires_at), used_at: row.used_at === null ? null : asDate(row.used_at) }
  );
}

/**
 * Mark a code used, if nobody has: one conditional update, so of two concurrent redemptions exactly one gets
 * true.
 */
export async function markAuthorizationCodeUsed(db: Queryable, codeHash: string, at: Date): Promise<boolean> {
  const won = await db
    .updateTable('oauth_codes')
    .set({ used_at: at })
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(won.numUpdatedRows) > 0;
}

export async function deleteAuthorizationCodesExpiredBefore(db: Queryable, before: Date): Promise<void> {
  await db.deleteFrom('oauth_codes').where('expires_at', '<', before).execute();
}
