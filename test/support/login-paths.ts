import { basic } from './databases.js';
import { pkcePair, postForm, signIn } from './oauth-flow.js';

/**
 * Every way to present a password: HTTP Basic on an operation, POST /login, the token endpoint's
 * client_credentials grant and the authorize page's sign-in form. Shared by the suites that must hold for
 * each of them (throttling, the cost of a check).
 */
export type LoginPath = 'basic' | 'login' | 'token' | 'authorize';
export const PATHS: LoginPath[] = ['basic', 'login', 'token', 'authorize'];

interface Requester {
  request(path: string, init?: RequestInit): Response | Promise<Response>;
}

/**
 * One password attempt through a path from an address (sent as `x-test-address`, which the suites' boot reads
 * as the client address); answers the HTTP status, normalised: 200 accepted, 401, 429.
 */
export async function attempt(
  node: { app: Requester },
  path: LoginPath,
  username: string,
  password: string,
  address: string,
): Promise<{ status: number; retryAfter: number | null }> {
  const from = { 'x-test-address': address };
  const app = {
    request: (p: string, init: RequestInit = {}) =>
      node.app.request(p, { ...init, headers: { ...(init.headers as Record<string, string>), ...from } }),
  };
  let res: Response;
  if (path === 'basic')
    res = await app.request('/admin/accounts/count', { headers: { authorization: basic(username, password) } });
  else if (path === 'login') {
    res = await app.request('/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password }),
    });
  } else if (path === 'token')
    res = await postForm(app, '/oauth2/token', {
      grant_type: 'client_credentials',
      client_id: username,
      client_secret: password,
    });
  else res = await signIn(app, username, password, { challenge: (await pkcePair()).challenge });
  await res.arrayBuffer();
  // A sign-in redirects with a code; an operation above the account's role answers 403 once the password passed.
  const status = res.status === 302 || (path === 'basic' && res.status === 403) ? 200 : res.status;
  const retry = res.headers.get('retry-after');
  return { status, retryAfter: retry === null ? null : Number(retry) };
}
