import { sql, type RawBuilder } from 'kysely';
import { PreparedQuery } from '../../prepared.js';
import type { AccountsTable } from '../../tables.js';

/**
 * What the Bearer check of an account token reads (services/auth/account-check.ts says when and why): the
 * account, and whether the token's login is revoked. Two forms of the same question: a statement of its own
 * ({@link TOKEN_ACCOUNT}), or a column a read's statement carries ({@link accountColumn}).
 */

/** What the Bearer check reads for a token of an account: the account, and whether the token's login is revoked. */
export interface TokenAccountRow {
  id: number;
  username: string;
  role: AccountsTable['role'];
  enabled: boolean;
  credential_version: number;
  revoked: boolean;
}

/**
 * The account behind a token and whether the token is revoked (its login, refresh-token family `$2`, null for
 * none; or the token itself, `jti` `$3`), in one prepared statement: on PostgreSQL it runs on every request that does not carry it in its own statement
 * (services/auth/account-check.ts `PendingAccountCheck`; see credential-cache.ts for why it is not cached there).
 */
export const TOKEN_ACCOUNT = new PreparedQuery<TokenAccountRow>(
  'token_account',
  `select id, username, role, enabled, credential_version,
     exists (select 1 from refresh_tokens where family_id = $2 and revoked_at is not null)
       or exists (select 1 from revoked_access_tokens where jti = $3) as revoked
   from accounts where id = $1`,
);

/**
 * The account `accountId` as a JSON object (null when there is none) with whether the login `sid` or the token
 * `jti` is revoked,
 * as a column of a read's statement ({@link TOKEN_ACCOUNT} as one value). PostgreSQL evaluates it once per
 * statement (it names no column of the read's own rows), in the read's snapshot. Sent as text: it repeats on
 * every row of a page and only the first row's is read (PendingAccountCheck.settle parses it), where a `json`
 * column made the driver parse it on each of them.
 */
export function accountColumn(
  accountId: number,
  sid: string | null,
  jti: string | null,
): RawBuilder<TokenAccountRow | string | null> {
  return sql<
    TokenAccountRow | string | null
  >`(select json_build_object('id', a.id, 'username', a.username, 'role', a.role, 'enabled', a.enabled,
    'credential_version', a.credential_version,
    'revoked', exists (select 1 from refresh_tokens where family_id = ${sid} and revoked_at is not null)
      or exists (select 1 from revoked_access_tokens where jti = ${jti}))
    from accounts a where a.id = ${accountId})::text`;
}
