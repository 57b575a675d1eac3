import { fromBase64 } from '../../encoding/base64.js';
import { baseUrlOf, type Config } from '../../config/config.js';
import type { Principal } from './principal.js';
import { sha256Now, unmatchableHash, verifyPassword } from '../../auth/password.js';
import { LoginThrottle, throttlePolicy, type Verdict } from './throttle.js';
import { SigningKeys } from './signing-keys.js';
import { findAccountForLogin } from '../../db/repositories/accounts.js';
import { findTokenClient } from '../../db/repositories/auth/oauth-clients.js';
import { PendingAccountCheck } from './account-check.js';
import { TOKEN_ACCOUNT, type TokenAccountRow } from '../../db/repositories/auth/token-account.js';
import { roleCovers } from './principal.js';
import { CredentialCache } from './credential-cache.js';
import { VerifiedTokens } from './verified-tokens.js';
import type { Role } from '../../auth/roles.js';
import type { ServiceContext } from '../context.js';
import {
  accountPrincipal,
  claimsOf,
  CREDENTIAL_VERSION_CLAIM,
  unauthorized,
  weaker,
  type AccountClaims,
  type TokenClaims,
} from './token-claims.js';

/** The issuer of our tokens and base of the OAuth endpoints: `BIMS_AUTH_URL`, else the service's base URL. */
export function issuerOf(config: Config): string {
  return config.BIMS_AUTH_URL ?? baseUrlOf(config);
}

/**
 * Authentication for every surface: HTTP Basic with an account's password, or a Bearer JWT issued by
 * `/oauth2/token`. Holds the per-process state this needs: signing keys, the login throttle, and a cache of
 * recently verified Basic credentials (PBKDF2 is deliberately slow; re-deriving it on every request of an
 * integration that uses Basic would cost ~0.2 s each).
 */
export class AuthService {
  readonly keys: SigningKeys;
  readonly throttle: LoginThrottle;
  /** sha256(username, password) -> password hash it was checked against; valid while the hash is unchanged. */
  private verified = new Map<string, string>();
  /** Access tokens whose signature has been checked, until they expire. */
  private readonly tokens: VerifiedTokens;
  /** Accounts, clients and revoked logins behind tokens, briefly (see credential-cache.ts for why that is exact). */
  readonly credentials: CredentialCache;

  constructor(private readonly ctx: ServiceContext) {
    this.keys = new SigningKeys(ctx);
    this.tokens = new VerifiedTokens(this.keys, () => ctx.now());
    this.credentials = new CredentialCache(ctx);
    // On PGlite this process writes the throttle's table alone, as it writes the accounts (credential-cache.ts).
    const soleWriter = this.credentials.enabled;
    this.throttle = new LoginThrottle(ctx.db, () => ctx.now().getTime(), throttlePolicy(ctx.config), soleWriter);
  }

  /** The claims of an access token of ours that verifies (signature, key, issuer, lifetime), else null. */
  verifiedClaims(token: string): Promise<{ [claim: string]: unknown } | null> {
    return this.tokens.verify(token, this.issuer);
  }

  /** Our tokens' issuer: the service's public base URL. */
  get issuer(): string {
    return issuerOf(this.ctx.config);
  }

  /** Resolve an Authorization header to a principal, or throw 401. */
  async authenticate(header: string | undefined, address: string): Promise<Principal> {
    if (!header) throw unauthorized('Credentials are required: HTTP Basic or a Bearer token');
    const space = header.indexOf(' ');
    const scheme = header.slice(0, space === -1 ? undefined : space).toLowerCase();
    const value = space === -1 ? '' : header.slice(space + 1).trim();
    if (scheme === 'basic') {
      let decoded: string;
      try {
        decoded = new TextDecoder('utf-8', { fatal: true }).decode(fromBase64(value));
      } catch {
        throw unauthorized('Malformed Basic credentials');
      }
      const colon = decoded.indexOf(':');
      if (colon < 0) throw unauthorized('Malformed Basic credentials');
      return this.checkPassword(decoded.slice(0, colon), decoded.slice(colon + 1), address);
    }
    if (scheme === 'bearer') return this.checkBearer(value);
    throw unauthorized(`Unsupported authorization scheme '${scheme}'`);
  }

  /**
   * Check a user name and password (Basic, `/login`, the authorize page, client_credentials for an account);
   * throttled per (user name, address) and per address; throws 401 or 429. Answers the account's credential
   * version too, for the tokens issued on the strength of this check.
   */
  async checkPassword(
    username: string,
    password: string,
    address: string,
  ): Promise<Principal & { credentialVersion: number }> {
    // Read while the throttle reads its own row; a refused attempt just drops it. On PGlite the row comes from the
    // credential cache, which every change of a password, name, role, enabled flag or deletion empties on commit.
    const loading = this.credentials.read(
      'login',
      username,
      () => findAccountForLogin(this.ctx.db, username),
      (row) => row !== undefined,
    );
    loading.catch(() => undefined);
    // Synchronous where the runtime can (password.ts): a thread-pool round trip less on every Basic request.
    const key = sha256Now(`${username}\u0000${password}`);
    const cacheKey = typeof key === 'string' ? key : await key;
    const verdict: Verdict<Principal & { credentialVersion: number }> = await this.throttle.attempt(
      `account:${username.toLowerCase()}`,
      address,
      cacheKey,
      async () => {
        const account = await loading;
        // An unknown name costs the same derivation as a wrong password (a disabled account's is checked too).
        const ok = account
          ? this.verified.get(cacheKey) === account.password_hash ||
            (await verifyPassword(password, account.password_hash))
          : await verifyPassword(password, unmatchableHash(this.ctx.config.BIMS_PASSWORD_ITERATIONS));
        if (!account || !ok) {
          this.verified.delete(cacheKey);
          return { ok: false, reason: 'Bad user name or password' };
        }
        if (this.verified.size > 10_000) this.verified.clear();
        this.verified.set(cacheKey, account.password_hash);
        if (!account.enabled) return { ok: false, reason: 'The account is disabled' };
        return {
          ok: true,
          value: {
            accountId: account.id,
            username: account.username,
            role: account.role,
            via: 'basic',
            credentialVersion: account.credential_version,
          },
        };
      },
    );
    if (!verdict.ok) throw unauthorized(verdict.reason);
    return verdict.value;
  }

  private async checkBearer(token: string): Promise<Principal> {
    const claims = await this.bearerClaims(token);
    if (claims.kind === 'account') {
      // Checked on every request against the account row, so that a change of password, role or enabled flag
      // (the credential version) or a deletion ends the token at once, and so that revoking the login (`sid`:
      // its refresh-token family) ends its access tokens too, not only its refresh tokens. The rows come from
      // the credential cache, which every such change empties on every node before anyone can see it.
      const account = await this.credentials.read(
        'account',
        `${claims.accountId}\u0000${claims.sid ?? ''}\u0000${claims.jti ?? ''}`,
        () => this.tokenAccount(claims),
        (row) => row !== undefined,
      );
      return accountPrincipal(claims, account);
    }
    const client = await this.credentials.read(
      'client',
      `${claims.clientId}\u0000${claims.jti ?? ''}`,
      () => findTokenClient(this.ctx.db, claims.clientId, claims.jti),
      (row) => row !== undefined,
    );
    if (!client) throw unauthorized('The client behind this token is gone', 'invalid_token');
    if (client.revoked) throw unauthorized('This token has been revoked', 'invalid_token');
    return {
      accountId: null,
      username: client.client_id,
      role: weaker(claims.scope, client.role),
      via: 'bearer',
      clientId: client.client_id,
    };
  }

  /** A verified token's claims: whose it is and what it may do; throws 401 for a token that does not verify. */
  private async bearerClaims(token: string): Promise<TokenClaims> {
    return claimsOf(await this.tokens.verify(token, this.issuer));
  }

  private async tokenAccount(claims: AccountClaims): Promise<TokenAccountRow | undefined> {
    return (await TOKEN_ACCOUNT.execute(this.ctx.db, [claims.accountId, claims.sid, claims.jti]))[0];
  }

  /**
   * For a read that can carry the account check in its own statement (PostgreSQL, where that check is a query
   * on every request): a Bearer token of an account whose scope covers `needed` is verified now, and its
   * account check is answered as a {@link PendingAccountCheck} beside the principal it would make (its
   * username and role are the account's once the check has passed). Undefined for every other case (Basic,
   * client tokens, a scope below `needed`, PGlite whose checks come from memory): the caller authenticates as
   * usual. `forbidden` makes the 403 for an account whose role falls below `needed`.
   */
  async deferAccountCheck(
    header: string | undefined,
    needed: Role,
    forbidden: (held: Role) => Error,
  ): Promise<{ principal: Principal; check: PendingAccountCheck } | undefined> {
    if (this.credentials.enabled || !header) return undefined;
    const space = header.indexOf(' ');
    if (space === -1 || header.slice(0, space).toLowerCase() !== 'bearer') return undefined;
    const claims = await this.bearerClaims(header.slice(space + 1).trim());
    if (claims.kind !== 'account' || !roleCovers(claims.scope, needed)) return undefined;
    const principal: Principal = {
      accountId: claims.accountId,
      username: claims.username,
      role: claims.scope,
      via: 'bearer',
      clientId: claims.clientId,
    };
    const check = new PendingAccountCheck(
      claims.accountId,
      claims.sid,
      claims.jti,
      (row) => {
        Object.assign(principal, accountPrincipal(claims, row));
        if (!roleCovers(principal.role, needed)) throw forbidden(principal.role);
      },
      () => this.tokenAccount(claims),
    );
    principal.accountCheck = check;
    return { principal, check };
  }

  /**
   * Sign an access token for an account or a client. `extra.sid` names the login (refresh-token family) the
   * token belongs to, so that revoking the login ends the token too.
   */
  async accessToken(
    subject: { accountId: number; username: string; credentialVersion: number } | { clientId: string },
    role: Role,
    clientId: string,
    extra: { sid?: string } = {},
  ): Promise<string> {
    const sub = 'accountId' in subject ? `account:${subject.accountId}` : `client:${subject.clientId}`;
    const account =
      'accountId' in subject
        ? { preferred_username: subject.username, [CREDENTIAL_VERSION_CLAIM]: subject.credentialVersion }
        : {};
    return this.keys.sign(
      { ...extra, sub, scope: role, client_id: clientId, ...account },
      this.ctx.config.BIMS_ACCESS_TOKEN_SECONDS,
      this.issuer,
    );
  }
}
