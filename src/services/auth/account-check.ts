import type { TokenAccountRow } from '../../db/repositories/auth/token-account.js';

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
    /** The token's id, for a revocation of that token alone (RFC 7009). */
    readonly jti: string | null,
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
