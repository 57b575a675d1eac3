import { decodeProtectedHeader, type JWTPayload } from 'jose';
import { sha256Now } from '../../auth/password.js';
import type { SigningKeys } from './signing-keys.js';

/** The key a token is remembered by: SHA-256, base64url without padding (at once where the runtime can). */
const tokenKey = sha256Now;

/** Most tokens remembered; the oldest are forgotten first (they are only verified again). */
const LIMIT = 10_000;

interface Verified {
  payload: JWTPayload;
  kid: string;
  /** Seconds since the epoch, as in the token: usable while the current second is before `exp` and not before `nbf`. */
  exp: number;
  nbf: number;
}

/**
 * Access tokens whose signature, issuer, audience and type have been checked, remembered by the SHA-256 of
 * the token (never the token itself) until they expire. Checking an ES256 signature costs about a quarter of
 * a millisecond on every request of a client that reuses its token; looking it up costs a hash. A remembered
 * token is still refused once it expires, and once the key that signed it is retired (as SigningKeys.verify
 * would refuse it). What a token stands for (its account, client, login) is checked by the caller every time.
 */
export class VerifiedTokens {
  private tokens = new Map<string, Verified>();

  constructor(
    private readonly keys: SigningKeys,
    private readonly now: () => Date,
  ) {}

  /** The token's claims if it verifies as an access token of `issuer` now, else null. */
  async verify(token: string, issuer: string): Promise<JWTPayload | null> {
    // Awaited only when they are promises: a remembered token is checked on every request, and each await of a
    // value already there is a turn of the microtask queue (here three: the hash, the key's check, its refresh).
    const key = tokenKey(`${issuer}\u0000${token}`);
    const hash = typeof key === 'string' ? key : await key;
    const second = Math.floor(this.now().getTime() / 1000);
    const known = this.tokens.get(hash);
    if (known) {
      if (second < known.exp && second >= known.nbf) {
        const usable = this.keys.usable(known.kid);
        if (usable === true || (usable !== false && (await usable))) return known.payload;
      }
      this.tokens.delete(hash);
    }
    const payload = await this.keys.verify(token, issuer);
    if (payload && typeof payload.exp === 'number') {
      while (this.tokens.size >= LIMIT) this.tokens.delete(this.tokens.keys().next().value!);
      const kid = decodeProtectedHeader(token).kid!;
      this.tokens.set(hash, {
        payload,
        kid,
        exp: payload.exp,
        nbf: typeof payload.nbf === 'number' ? payload.nbf : -Infinity,
      });
    }
    return payload;
  }
}
