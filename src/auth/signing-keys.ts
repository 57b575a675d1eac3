import { SignJWT, exportJWK, generateKeyPair, importJWK, jwtVerify, decodeProtectedHeader, type JWK, type JWTPayload } from 'jose';
import type { ServiceContext } from '../services/context.js';
import { json } from '../db/json.js';
import { randomSecret } from './password.js';

const ALG = 'ES256';
/** Issuer and audience of our tokens. */
export const TOKEN_AUDIENCE = 'bims';

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

/**
 * The service's JWT signing keys, kept in the database so every node signs and verifies alike. The newest
 * unretired key signs; a key older than the rotation period is replaced by a fresh one and keeps verifying
 * until it is retired. Tokens whose `kid` is retired or unknown fail.
 */
export class SigningKeys {
  private keys = new Map<string, LoadedKey>();
  private loadedAt = 0;

  constructor(private readonly ctx: ServiceContext) {}

  /** Re-read keys from the database (other nodes may have rotated) at most every 30 s. */
  private async refresh(force = false): Promise<void> {
    const now = this.ctx.now().getTime();
    if (!force && now - this.loadedAt < 30_000 && this.keys.size > 0) return;
    const rows = await this.ctx.db.selectFrom('signing_keys').selectAll().orderBy('created_at', 'asc').execute();
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
        createdAt: new Date(row.created_at),
        retired,
        privateKey: await importJWK(row.private_jwk as JWK, row.alg),
        publicKey: await importJWK(row.public_jwk as JWK, row.alg),
        publicJwk: { ...(row.public_jwk as JWK), kid: row.kid, alg: row.alg, use: 'sig' },
      });
    }
    this.keys = next;
    this.loadedAt = now;
  }

  /** The key that signs now, creating or rotating it when needed. */
  private async current(): Promise<LoadedKey> {
    await this.refresh();
    const live = [...this.keys.values()].filter((k) => !k.retired).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
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
    await this.ctx.db
      .insertInto('signing_keys')
      .values({
        kid,
        alg: ALG,
        private_jwk: json(await exportJWK(privateKey)),
        public_jwk: json(await exportJWK(publicKey)),
        created_at: this.ctx.now(),
      })
      .execute();
    await this.refresh(true);
    return kid;
  }

  /** Retire a key: tokens it signed stop verifying at once on this node, within 30 s on others. */
  async retire(kid: string): Promise<void> {
    await this.ctx.db.updateTable('signing_keys').set({ retired_at: this.ctx.now() }).where('kid', '=', kid).execute();
    await this.refresh(true);
  }

  async sign(claims: JWTPayload, expiresInSeconds: number, issuer: string, kind: TokenKind = ACCESS_TOKEN): Promise<string> {
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
    if (!kid) return null;
    await this.refresh();
    let key = this.keys.get(kid);
    if (!key) {
      await this.refresh(true);
      key = this.keys.get(kid);
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

  /** Public keys of every unretired key, for `/oauth2/jwks`. */
  async jwks(): Promise<{ keys: JWK[] }> {
    await this.current();
    return { keys: [...this.keys.values()].filter((k) => !k.retired).map((k) => k.publicJwk) };
  }
}
