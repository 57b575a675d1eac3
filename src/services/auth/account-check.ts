import { sql, type RawBuilder } from 'kysely';
import { PreparedQuery } from '../../db/prepared.js';
import type { Role } from '../../auth/roles.js';

/** What the Bearer check reads for a token of an account: the account, and whether the token's login is revoked. */
export interface TokenAccountRow {
  id: number;
  username: string;
  role: Role;
  enabled: boolean;
  credential_version: number;
  revoked: boolean;
}

/**
 * The account behind a token and whether its login (refresh-token family `$2`, null for none) is revoked, in
 * one prepared statement: on PostgreSQL it runs on every request that does not carry it in its own statement
 * ({@link PendingAccountCheck}; see credential-cache.ts for why it is not cached there).
 */
export const TOKEN_ACCOUNT = new PreparedQuery<TokenAccountRow>(
  'token_account',
  `select id, username, role, enabled, credential_version,
     exists (select 1 from refresh_tokens where family_id = $2 and revoked_at is not null) as revoked
   from accounts where id = $1`,
);

/**
 * The account `accountId` as a JSON object (null when there is none) with whether the login `sid` is revoked,
 * as a column of a read's statement ({@link TOKEN_ACCOUNT} as one value). PostgreSQL evaluates it once per
 * statement (it names no column of the read's own rows), in the read's snapshot.
 */
export function accountColumn(accountId: number, sid: string | null): RawBuilder<TokenAccountRow | string | null> {
  return sql<
    TokenAccountRow | string | null
  >`(select json_build_object('id', a.id, 'username', a.username, 'role', a.role, 'enabled', a.enabled,
    'credential_version', a.credential_version,
    'revoked', exists (select 1 from refresh_tokens where family_id = ${sid} and revoked_at is not null))
    from accounts a where a.id = ${accountId})`;
}

/**
 * The Bearer check of an account token, left for a read to make inside its own statement: one round trip to
 * PostgreSQL per read instead of two. The token itself (signature, expiry, issuer, scope) is verified before;
 * what is left is what only the database knows and what must end a token at once on every node (a disabled or
 * deleted account, a changed password or role, a revoked login). A statement that carries the check reads the
 * account row in the same snapshot as its own rows ({@link accountColumn}), and the answer is judged ({@link settle})
 * before anything of it is used. Whatever no statement carried (no row came back, the handler failed early, a
 * read that takes no check) is checked on its own ({@link run}) before the answer or the error goes out, so
 * the verdict and its precedence are those of the guard: 401, then 403, then what the read found.
 *
 * Only for reads: a handler that changed something before the check would have changed it for a caller the
 * check then refuses.
 */
export class PendingAccountCheck {
  private passed = false;
  private failure: unknown;

  constructor(
    readonly accountId: number,
    readonly sid: string | null,
    /** Throws the 401 or 403 the guard would have; fills in the caller's principal otherwise. */
    private readonly judge: (row: TokenAccountRow | undefined) => void,
    /** The check on its own: {@link TOKEN_ACCOUNT}. */
    private readonly load: () => Promise<TokenAccountRow | undefined>,
  ) {}

  /** Still to be made: a statement should carry it. */
  get pending(): boolean {
    return !this.passed && this.failure === undefined;
  }

  /** Judge the account a statement brought along (its {@link accountColumn}, parsed or as text); throws 401 or 403. */
  settle(row: TokenAccountRow | string | null | undefined): void {
    if (this.passed) return;
    if (this.failure !== undefined) throw this.failure;
    try {
      this.judge(typeof row === 'string' ? (JSON.parse(row) as TokenAccountRow) : (row ?? undefined));
      this.passed = true;
    } catch (error) {
      this.failure = error;
      throw error;
    }
  }

  /** Make the check on its own if no statement made it; throws 401 or 403. */
  async run(): Promise<void> {
    if (this.pending) this.settle(await this.load());
    else if (this.failure !== undefined) throw this.failure;
  }
}
