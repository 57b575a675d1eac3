/**
 * The dashboard's only way to the service: the public API on the same origin (the page is served through the
 * API's /dashboard proxy), with a Bearer token obtained at sign-in. The token lives in sessionStorage: it
 * survives a reload, not the closing of the tab.
 */

const KEY = 'bims.dashboard.session';

/** A failed call: the HTTP status and the problem the API answered (RFC 9457), whose detail is shown. */
export class ApiError extends Error {
  constructor(status, message, problem = {}) {
    super(message);
    this.status = status;
    this.problem = problem;
  }
}

/** The signed-in session { token, role, username, expiresAt }, or null. */
export function session() {
  try {
    const s = JSON.parse(sessionStorage.getItem(KEY) ?? 'null');
    return s && s.expiresAt > Date.now() ? s : null;
  } catch {
    return null;
  }
}

export function signOut() {
  sessionStorage.removeItem(KEY);
}

/** The roles the dashboard's own pages are for; the camera page takes every role (USER included). */
export const DASHBOARD_ROLES = ['ADMIN', 'ADJUDICATOR'];

/**
 * Sign in with an account's user name and password: the token endpoint's client_credentials grant accepts an
 * account's credentials and answers a token whose scope is the account's role. An account whose role is not in
 * `roles` is refused here, before any page shows.
 */
export async function signIn(username, password, roles = DASHBOARD_ROLES) {
  let res;
  try {
    res = await fetch('/oauth2/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: username, client_secret: password }),
    });
  } catch {
    throw new ApiError(0, 'The BIMS service could not be reached. Check your connection and try again.');
  }
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, signInFailure(res, body), body);
  const role = String(body.scope ?? '').split(' ')[0];
  if (!roles.includes(role)) {
    throw new ApiError(
      403,
      `The account ${username} has the role ${role || 'unknown'}; the dashboard is for adjudicators and administrators (the camera page, capture.html, is for every account).`,
    );
  }
  const s = { token: body.access_token, role, username, expiresAt: Date.now() + (Number(body.expires_in) - 10) * 1000 };
  sessionStorage.setItem(KEY, JSON.stringify(s));
  return s;
}

/**
 * Why a sign-in failed, in the reader's words. The token endpoint speaks OAuth ("Client authentication
 * failed" means a wrong user name or password to a person at a sign-in form), so its errors are translated;
 * anything unexpected keeps the service's own description.
 */
function signInFailure(res, body) {
  if (res.status === 429) {
    const seconds = Number(res.headers.get('retry-after'));
    const plural = (n, unit) => `${n} ${unit}${n === 1 ? '' : 's'}`;
    const wait =
      Number.isFinite(seconds) && seconds > 0
        ? `in ${seconds < 90 ? plural(Math.ceil(seconds), 'second') : plural(Math.ceil(seconds / 60), 'minute')}`
        : 'later';
    return `Too many failed sign-ins for this account. Wait and try again ${wait}.`;
  }
  if (body.error === 'invalid_client' || res.status === 401)
    return 'The user name or password is not right, or the account is disabled. Check them and try again (passwords are case-sensitive).';
  if (res.status >= 500)
    return 'The service could not sign you in because of a problem on its side. Try again in a moment; if it persists, tell the administrator.';
  return `Sign-in failed: ${body.error_description ?? body.detail ?? `the service answered HTTP ${res.status}`}.`;
}

/**
 * Where each kind of operation lives for the signed-in role: an ADMIN uses the admin surface for everything;
 * an ADJUDICATOR has the adjudication operations under /adjudicator and nothing else here.
 */
export function surfaces(s = session()) {
  return { adjudication: s?.role === 'ADMIN' ? '/admin' : '/adjudicator', admin: '/admin' };
}

/** Raised after the API refused the token (expired, revoked): the page goes back to sign-in. */
export const onSignedOut = new EventTarget();

/**
 * Call an operation. `query` is an object (empty values dropped), `body` is sent as JSON. Answers the parsed
 * JSON, null for 204, or the Response itself when `raw` is set (downloads). Failures throw ApiError.
 */
export async function call(path, { method = 'GET', query, body, accept = 'application/json', raw = false } = {}) {
  const s = session();
  if (!s) {
    onSignedOut.dispatchEvent(new Event('signed-out'));
    throw new ApiError(401, 'Please sign in.');
  }
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {}))
    if (v !== undefined && v !== null && v !== '') search.set(k, String(v));
  const url = search.toString() ? `${path}?${search}` : path;
  const res = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${s.token}`,
      accept,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  if (res.status === 401) {
    signOut();
    onSignedOut.dispatchEvent(new Event('signed-out'));
    throw new ApiError(401, 'Your session has ended; please sign in again.');
  }
  if (!res.ok) throw await problemOf(res);
  if (raw) return res;
  if (res.status === 204) return null;
  return res.json();
}

/** The problem document of a failed answer, as an ApiError whose message names the offending fields. */
async function problemOf(res) {
  const problem = await res.json().catch(() => ({}));
  const detail = problem.detail ?? problem.title ?? `HTTP ${res.status}`;
  // Field errors the detail does not already say are listed under it, one a line.
  const fields = (Array.isArray(problem.errors) ? problem.errors : [])
    .filter((e) => !detail.includes(e.message))
    .map((e) => `${e.field}: ${e.message}`);
  return new ApiError(res.status, [detail, ...fields].join('\n'), problem);
}
