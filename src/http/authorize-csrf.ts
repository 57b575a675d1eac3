import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { randomSecret, sha256 } from '../auth/password.js';
import { safeEqual } from '../auth/safe-equal.js';
import type { TokenKind } from '../services/auth/signing-keys.js';
import type { AppEnv } from './env.js';

/**
 * CSRF protection of the login form: a signed double-submit token. The browser holds a random nonce in a
 * strict, HttpOnly cookie; the form holds a short-lived JWT, signed with the service's own keys (so every
 * node of a cluster can check it without a shared secret in configuration), binding the nonce's hash to
 * the very authorization request the form was shown for. A cross-site page can neither read the cookie
 * nor forge the signature, and cannot swap the request parameters under a genuine token. With an https
 * issuer the cookie takes the `__Host-` prefix so a sibling subdomain cannot plant one.
 */

const FORM_TOKEN: TokenKind = { typ: 'bims-authorize-form+jwt', audience: 'bims:authorize-form' };
const LIFETIME_SECONDS = 15 * 60;
const NONCE = /^[A-Za-z0-9_-]{22}$/;

const cookieName = (secure: boolean) => (secure ? '__Host-bims-authorize' : 'bims-authorize');

/** The parameters of the authorization request the form carries, as one string to bind. */
export function requestBinding(params: Record<string, string | undefined>): string {
  return JSON.stringify(['client_id', 'redirect_uri', 'code_challenge', 'state', 'scope'].map((k) => params[k] ?? ''));
}

/** Issue (or renew) the cookie and return the hidden field value for a form bound to `binding`. */
export async function issueFormToken(c: Context<AppEnv>, binding: string): Promise<string> {
  const auth = c.get('services').auth;
  const secure = auth.issuer.startsWith('https:');
  // Reuse the browser's nonce so that two sign-in tabs open at once both stay valid.
  let nonce = getCookie(c, cookieName(secure));
  if (!nonce || !NONCE.test(nonce)) nonce = randomSecret(16);
  setCookie(c, cookieName(secure), nonce, {
    path: '/',
    httpOnly: true,
    secure,
    sameSite: 'Strict',
    maxAge: LIFETIME_SECONDS,
  });
  return auth.keys.sign(
    { n: await sha256(nonce), b: await sha256(binding) },
    LIFETIME_SECONDS,
    auth.issuer,
    FORM_TOKEN,
  );
}

/** True when the posted hidden field matches this browser's cookie and the posted request. */
export async function checkFormToken(c: Context<AppEnv>, field: string | undefined, binding: string): Promise<boolean> {
  const auth = c.get('services').auth;
  const secure = auth.issuer.startsWith('https:');
  const nonce = getCookie(c, cookieName(secure));
  if (!field || !nonce || !NONCE.test(nonce)) return false;
  const claims = await auth.keys.verify(field, auth.issuer, FORM_TOKEN);
  if (!claims || typeof claims.n !== 'string' || typeof claims.b !== 'string') return false;
  return safeEqual(claims.n, await sha256(nonce)) && safeEqual(claims.b, await sha256(binding));
}
