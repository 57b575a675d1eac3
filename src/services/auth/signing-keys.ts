import {
  SignJWT,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  decodeProtectedHeader,
  type JWK,
  type JWTPayload,
} from 'jose';
import type { ServiceContext } from '../context.js';
import { insertSigningKey, listSigningKeys, retireSigningKey } from '../../db/repositories/auth/signing-keys.js';
import { randomSecret } from '../../auth/password.js';

const ALG = 'ES256';
/** Issuer and audience of our tokens. */
const TOKEN_AUDIENCE = 'bims';

/**
 * What kind of JWT is signed or expected. Access tokens are `at+jwt` for audience `bims` (RFC 9068); other
 * uses (the authorize form's CSRF token) pick their own type and audience so that no token made for one
 * purpose is ever accepted for another.
 */
export interface TokenKind {
  typ: string;
  audience: string;
}
const ACCESS_TOKEN: TokenKind = { typ: 'at+jwt', audience: TOKEN_AUDIENCE };

interface LoadedKey {
  kid: string;
  createdAt: Date;
  retired: boolean;
  privateKey?: CryptoKey | Uint8Array;
  publicKey: CryptoKey | Uint8Array;
  publicJwk: JWK;
}

/** Reloads for a `kid` not held in memory start at most this often, whatever the number of such tokens. */
const UNKNOWN_KID_RELOAD_INTERVAL_MS = 1000;
/** A `kid` a reload did not find is refused from memory this long, without another reload. */
const UNKNOWN_KID_MEMORY_MS = 60_000;
/** At most this many unknown kids are remembered; the oldest are forgotten first. */
const UNKNOWN_KID_LIMIT = 10_000;
/** Our kids are 16 characters; anything much longer is not worth a look. */
const MAX_KID_LENGTH = 64;

/**
 * The service's JWT signing keys, kept in the database so every node signs and verifies alike. The newest
 * unretired key signs; a key older than the rotation period is replaced by a fresh one and keeps verifying
 * until it is retired. Tokens whose `kid` is retired or unknown fail.
 *
 * A token naming a `kid` not in memory may come from a key another node has just made, so it triggers a
 * reload; but anyone can send such tokens, so those reloads are rate-limited (one starts at most every
 * second and every request waiting for one shares it) and a kid the reload did not find is remembered as
 * unknown for a minute. A genuinely new key is thus found within about a second, and a flood of made-up kids
 * costs the database one read per second.
 */
export class SigningKeys {
  private keys = new Map<string, LoadedKey>();
  private loadedAt = 0;
  /** The periodic reload in progress, shared by the requests that found the keys stale. */
  private loading?: Promise<void>;
  /** The reload for unknown kids that has not started reading yet, shared by every request that waits for it. */
  private pendingReload?: Promise<void>;
  /** When (real time) the last reload for unknown kids started reading. */
  private lastReloadStart = -Infinity;
  /** kid -> real time until which it counts as unknown without a reload. */
  private unknownKids = new Map<string, number>();

  constructor(private readonly ctx: ServiceContext) {}

  /** Re-read keys from the database (other nodes may have rotated) at most every 30 s. */
  private async refresh(): Promise<void> {
    const now = this.ctx.now().getTime();
    if (now - this.loadedAt < 30_000 && this.keys.size > 0) return;
    this.loading ??= this.load().finally(() => {
      this.loading = undefined;
    });
    await this.loading;
  }

  /**
   * A reload for a kid not in memory: joins the one waiting to start, else schedules one a second after the
   * last one started. Each waiting request's reload begins reading after the request arrived, so a key
   * committed before the token was signed is found.
   */
  private reloadForUnknownKid(): Promise<void> {
    if (this.pendingReload) return this.pendingReload;
    const wait = Math.max(0, this.lastReloadStart + UNKNOWN_KID_RELOAD_INTERVAL_MS - Date.now());
    const reload = (async () => {
      // Always yields first (even with no wait), so that this promise is the pending one before it starts.
      await new Promise((resolve) => setTimeout(resolve, wait));
      this.pendingReload = undefined;
      this.lastReloadStart = Date.now();
      await this.load();
    })();
    this.pendingReload = reload;
    return reload;
  }

  private knownUnknown(kid: string): boolean {
    const until = this.unknownKids.get(kid);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.unknownKids.delete(kid);
    return false;
  }

  private rememberUnknown(kid: string): void {
    this.unknownKids.delete(kid);
    while (this.unknownKids.size >= UNKNOWN_KID_LIMIT) this.unknownKids.delete(this.unknownKids.keys().next().value!);
    this.unknownKids.set(kid, Date.now() + UNKNOWN_KID_MEMORY_MS);
  }

  /** Read every key from the database. */
  private async load(): Promise<void> {
    const now = this.ctx.now().getTime();
    const rows = await listSigningKeys(this.ctx.db);
    const next = new Map<string, LoadedKey>();
    for (const row of rows) {
      const known = this.keys.get(row.kid);
      const retired = row.retired_at !== null;
      if (known) {
        next.set(row.kid, { ...known, retired });
        continue;
      }
      next.set(row.kid, {
        kid: row.kid,
        createdAt: row.created_at,
        retired,
        privateKey: await importJWK(row.private_jwk as JWK, row.alg),
        publicKey: await importJWK(row.public_jwk as JWK, row.alg),
        publicJwk: { ...(row.public_jwk as JWK), kid: row.kid, alg: row.alg, use: 'sig' },
      });
    }
    this.keys = next;
    this.loadedAt = now;
    for (const kid of next.keys()) this.unknownKids.delete(kid);
  }

  /** The key that signs now, creating or rotating it when needed. */
  private async current(): Promise<LoadedKey> {
    await this.refresh();
    const live = [...this.keys.values()]
      .filter((k) => !k.retired)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
    const newest = live[0];
    const maxAge = this.ctx.config.BIMS_SIGNING_KEY_ROTATION_SECONDS * 1000;
    if (newest && this.ctx.now().getTime() - newest.createdAt.getTime() < maxAge) return newest;
    await this.rotate();
    return this.current();
  }

  /** Make a new signing key; older keys keep verifying until retired. */
  async rotate(): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true });
    const kid = randomSecret(12);
    await insertSigningKey(this.ctx.db, {
      kid,
      alg: ALG,
      private_jwk: await exportJWK(privateKey),
      public_jwk: await exportJWK(publicKey),
      created_at: this.ctx.now(),
    });
    await this.load();
    return kid;
  }

  /** Retire a key: tokens it signed stop verifying at once on this node, within 30 s on others. */
  async retire(kid: string): Promise<void> {
    await retireSigningKey(this.ctx.db, kid, this.ctx.now());
    await this.load();
  }

  async sign(
    claims: JWTPayload,
    expiresInSeconds: number,
    issuer: string,
    kind: TokenKind = ACCESS_TOKEN,
  ): Promise<string> {
    const key = await this.current();
    const now = Math.floor(this.ctx.now().getTime() / 1000);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: ALG, kid: key.kid, typ: kind.typ })
      .setIssuedAt(now)
      .setNotBefore(now - 5)
      .setExpirationTime(now + expiresInSeconds)
      .setIssuer(issuer)
      .setAudience(kind.audience)
      .setJti(randomSecret(12))
      .sign(key.privateKey!);
  }

  /** Verify a token's signature, key, type, issuer, audience and lifetime; null if any check fails. */
  async verify(token: string, issuer: string, kind: TokenKind = ACCESS_TOKEN): Promise<JWTPayload | null> {
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      return null;
    }
    if (!kid || kid.length > MAX_KID_LENGTH) return null;
    await this.refresh();
    let key = this.keys.get(kid);
    if (!key) {
      if (this.knownUnknown(kid)) return null;
      await this.reloadForUnknownKid();
      key = this.keys.get(kid);
      if (!key) {
        this.rememberUnknown(kid);
        return null;
      }
    }
    if (!key || key.retired) return null;
    try {
      const { payload } = await jwtVerify(token, key.publicKey, {
        issuer,
        audience: kind.audience,
        typ: kind.typ,
        algorithms: [ALG],
        currentDate: this.ctx.now(),
      });
      return payload;
    } catch {
      return null;
    }
  }

  /** Whether tokens signed by `kid` still verify (held and not retired), for tokens verified before. */
  usable(kid: string): boolean | Promise<boolean> {
    // Answered at once while the keys are fresh (every request of a remembered token asks): no promise, no await.
    if (this.ctx.now().getTime() - this.loadedAt < 30_000 && this.keys.size > 0) return this.unretired(kid);
    return this.refresh().then(() => this.unretired(kid));
  }

  private unretired(kid: string): boolean {
    const key = this.keys.get(kid);
    return key !== undefined && !key.retired;
  }

  /** Public keys of every unretired key, for `/oauth2/jwks`. */
  async jwks(): Promise<{ keys: JWK[] }> {
    await this.current();
    return { keys: [...this.keys.values()].filter((k) => !k.retired).map((k) => k.publicJwk) };
  }
}
