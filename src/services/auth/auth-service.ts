import { baseUrlOf, type Config } from '../../config/config.js';
import type { Principal } from '../../auth/principal.js';
import { sha256, verifyPassword } from '../../auth/password.js';
import { LoginThrottle } from '../../auth/throttle.js';
import { SigningKeys } from '../../auth/signing-keys.js';
import { familyRevoked } from './refresh-tokens.js';
import type { Role } from '../../operations/types.js';
import type { ServiceContext } from '../context.js';
import { DomainError } from '../errors.js';

/** The issuer of our tokens and base of the OAuth endpoints: `BIMS_AUTH_URL`, else the service's base URL. */
export function issuerOf(config: Config): string {
  return config.BIMS_AUTH_URL ?? baseUrlOf(config);
}

const unauthorized = (detail: string, bearerError?: string) =>
  new DomainError('unauthorized', detail, bearerError ? { bearerError } : {});

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

  constructor(private readonly ctx: ServiceContext) {
    this.keys = new SigningKeys(ctx);
    this.throttle = new LoginThrottle(() => ctx.now().getTime());
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
        decoded = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(atob(value), (ch) => ch.charCodeAt(0)));
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

  /** Check a user name and password (Basic, `/login`, the authorize page); throttled; throws 401 or 429. */
  async checkPassword(username: string, password: string, address: string): Promise<Principal> {
    const keys = [`user:${username.toLowerCase()}`, `addr:${address}`];
    this.throttle.check(keys);
    const account = await this.ctx.db
      .selectFrom('accounts')
      .select(['id', 'username', 'role', 'enabled', 'password_hash'])
      .where('username', '=', username)
      .executeTakeFirst();
    const cacheKey = await sha256(`${username}\u0000${password}`);
    let ok = false;
    if (account) {
      ok = this.verified.get(cacheKey) === account.password_hash || (await verifyPassword(password, account.password_hash));
    }
    if (!account || !ok || !account.enabled) {
      this.throttle.fail(keys);
      this.verified.delete(cacheKey);
      throw unauthorized(account && ok ? 'The account is disabled' : 'Bad user name or password');
    }
    this.throttle.succeed(keys);
    if (this.verified.size > 10_000) this.verified.clear();
    this.verified.set(cacheKey, account.password_hash);
    return { accountId: account.id, username: account.username, role: account.role, via: 'basic' };
  }

  private async checkBearer(token: string): Promise<Principal> {
    const payload = await this.keys.verify(token, this.issuer);
    if (!payload || typeof payload.sub !== 'string') throw unauthorized('The access token is invalid or expired', 'invalid_token');
    const scope = payload.scope;
    if (scope !== 'ADMIN' && scope !== 'ADJUDICATOR' && scope !== 'USER') throw unauthorized('The access token has no scope', 'invalid_token');
    const clientId = typeof payload.client_id === 'string' ? payload.client_id : undefined;
    if (payload.sub.startsWith('account:')) {
      // Checked on every request so that disabling or demoting an account takes effect at once, and so that
      // revoking the login (`sid`: its refresh-token family) ends its access tokens too, not only its refresh tokens.
      const sid = typeof payload.sid === 'string' ? payload.sid : undefined;
      const [account, revoked] = await Promise.all([
        this.ctx.db
          .selectFrom('accounts')
          .select(['id', 'username', 'role', 'enabled'])
          .where('id', '=', Number(payload.sub.slice('account:'.length)))
          .executeTakeFirst(),
        sid === undefined ? false : familyRevoked(this.ctx.db, sid),
      ]);
      if (!account || !account.enabled) throw unauthorized('The account behind this token is gone or disabled', 'invalid_token');
      if (revoked) throw unauthorized('The login behind this token has been revoked', 'invalid_token');
      return { accountId: account.id, username: account.username, role: weaker(scope, account.role), via: 'bearer', clientId };
    }
    if (payload.sub.startsWith('client:')) {
      const client = await this.ctx.db
        .selectFrom('oauth_clients')
        .select(['client_id', 'role'])
        .where('client_id', '=', payload.sub.slice('client:'.length))
        .executeTakeFirst();
      if (!client) throw unauthorized('The client behind this token is gone', 'invalid_token');
      return { accountId: null, username: client.client_id, role: weaker(scope, client.role), via: 'bearer', clientId: client.client_id };
    }
    throw unauthorized('The access token has an unknown subject', 'invalid_token');
  }

  /**
   * Sign an access token for an account or a client. `extra.sid` names the login (refresh-token family) the
   * token belongs to, so that revoking the login ends the token too.
   */
  async accessToken(
    subject: { accountId: number; username: string } | { clientId: string },
    role: Role,
    clientId: string,
    extra: { sid?: string } = {},
  ): Promise<string> {
    const sub = 'accountId' in subject ? `account:${subject.accountId}` : `client:${subject.clientId}`;
    return this.keys.sign(
      { ...extra, sub, scope: role, client_id: clientId, ...('username' in subject ? { preferred_username: subject.username } : {}) },
      this.ctx.config.BIMS_ACCESS_TOKEN_SECONDS,
      this.issuer,
    );
  }
}

const order: Role[] = ['USER', 'ADJUDICATOR', 'ADMIN'];
function weaker(a: Role, b: Role): Role {
  return order[Math.min(order.indexOf(a), order.indexOf(b))]!;
}
