import { sha256 } from '../../auth/password.js';
import { safeEqual } from '../../auth/safe-equal.js';

/**
 * PKCE (RFC 7636), S256 only: `plain` would let anyone who sees the authorization request (browser history,
 * logs, a malicious app on the same device) redeem the code, which is what PKCE exists to prevent.
 */

/** RFC 7636 4.1: 43 to 128 characters from the unreserved set. */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** BASE64URL(SHA256(verifier)) without padding is always 43 characters. */
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

const isValidVerifier = (verifier: string): boolean => VERIFIER.test(verifier);
export const isValidChallenge = (challenge: string): boolean => CHALLENGE.test(challenge);

/** The S256 challenge of a verifier (the verifier is ASCII, so its UTF-8 bytes are its ASCII bytes). */
export function s256Challenge(verifier: string): Promise<string> {
  return sha256(verifier);
}

/** True when `verifier` hashes to `challenge`. */
export async function verifierMatches(verifier: string, challenge: string): Promise<boolean> {
  return isValidVerifier(verifier) && safeEqual(await s256Challenge(verifier), challenge);
}
