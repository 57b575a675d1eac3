import { decodeProtectedHeader, type JWTPayload } from 'jose';
import { sha256 } from '../../auth/password.js';
import type { SigningKeys } from './signing-keys.js';

/**
 * The runtime's synchronous SHA-256 where it has one (Node, Deno, Workers with Node compatibility).
 * WebCrypto's digest is a promise answered from the thread pool: a round trip per request, which under load
 * cost more than the rest of the Bearer check. Read through globalThis: this is runtime-neutral code.
 */
type NodeCrypto = {
  createHash(algorithm: string): { update(text: string): { digest(encoding: 'base64url'): string } };
  /** The one-shot form (Node 20.12+, Deno): no Hash object per call, about half the cost. */
  hash?: (algorithm: string, text: string, encoding: 'base64url') => string;
};
const nodeCrypto = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;

/**
 * The key a token is remembered by (the same text either way: SHA-256, base64url without padding): at once where
 * the runtime hashes synchronously, else a promise.
 */
function tokenKey(text: string): string | Promise<string> {
  if (nodeCrypto?.hash) return nodeCrypto.hash('sha256', text, 'base64url');
  return nodeCrypto ? nodeCrypto.createHash('sha256').update(text).digest('base64url') : sha256(text);
}

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
