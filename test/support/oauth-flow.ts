import { randomSecret } from '../../src/auth/password.js';
import { s256Challenge } from '../../src/services/auth/pkce.js';

/**
 * Drive the OAuth endpoints the way a browser and a client would, through `app.request` (no socket).
 * Shared so that any suite can obtain a Bearer token for an account.
 */

interface Requester {
  request(path: string, init?: RequestInit): Response | Promise<Response>;
}

/** A fresh PKCE verifier and its S256 challenge. */
export async function pkcePair(): Promise<{ verifier: string; challenge: string }> {
  const verifier = randomSecret(32);
  return { verifier, challenge: await s256Challenge(verifier) };
}

const unescape = (text: string) =>
  text.replace(
    /&(amp|lt|gt|quot|#39);/g,
    (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!,
  );

/** The hidden fields of the sign-in form in a page, as a browser would post them back. */
export function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    out[unescape(m[1]!)] = unescape(m[2]!);
  return out;
}

/** The `name=value` part of the response's Set-Cookie, to send back as a Cookie header. */
export function cookieOf(res: Response): string {
  return (res.headers.get('set-cookie') ?? '').split(';')[0]!;
}

/** Form-encoded POST. */
export function postForm(
  app: Requester,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) {
  return app.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

export interface AuthorizeOptions {
  clientId?: string;
  redirectUri?: string;
  scope?: string;
  state?: string;
  challenge?: string;
}

export const DOCS_REDIRECT = 'http://127.0.0.1:8080/docs/assets/oauth2-redirect.html';

/** The authorize URL for a request (defaults: the docs page's client, S256). */
export function authorizeUrl(o: AuthorizeOptions & { challenge: string }): string {
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: o.clientId ?? 'bims-docs',
    redirect_uri: o.redirectUri ?? DOCS_REDIRECT,
    code_challenge: o.challenge,
    code_challenge_method: 'S256',
    state: o.state ?? 'state-123',
  });
  if (o.scope) q.set('scope', o.scope);
  return `/oauth2/authorize?${q}`;
}

/**
 * Sign in through the form: GET the page, post the credentials with the page's hidden fields and cookie.
 * Returns the POST's response (a 302 to the client on success).
 */
export async function signIn(
  app: Requester,
  username: string,
  password: string,
  o: AuthorizeOptions & { challenge: string },
) {
  const page = await app.request(authorizeUrl(o));
  if (page.status !== 200) throw new Error(`authorize page answered ${page.status}`);
  const fields = hiddenFields(await page.text());
  return postForm(
    app,
    '/oauth2/authorize',
    { ...fields, username, password, action: 'login' },
    { cookie: cookieOf(page) },
  );
}

/** Run the whole authorization_code + PKCE flow and return the token response. */
export async function loginWithCode(app: Requester, username: string, password: string, o: AuthorizeOptions = {}) {
  const { verifier, challenge } = await pkcePair();
  const res = await signIn(app, username, password, { ...o, challenge });
  const location = res.headers.get('location');
  if (res.status !== 302 || !location) throw new Error(`sign-in answered ${res.status}`);
  const code = new URL(location).searchParams.get('code')!;
  const token = await postForm(app, '/oauth2/token', {
    grant_type: 'authorization_code',
    code,
    redirect_uri: o.redirectUri ?? DOCS_REDIRECT,
    code_verifier: verifier,
    client_id: o.clientId ?? 'bims-docs',
  });
  return { res: token, body: (await token.json()) as Record<string, string | number>, code, verifier };
}
