import type { Context, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { randomSecret } from '../auth/password.js';
import {
  AuthorizePageError,
  AuthorizeRedirect,
  ScopeNotHeld,
  approveAuthorization,
  checkAuthorizeRequest,
  errorRedirect,
  type AuthorizeRequest,
} from '../services/auth/authorize.js';
import { DomainError } from '../services/errors.js';
import type { AppEnv } from './env.js';
import { checkFormToken, issueFormToken, requestBinding } from './authorize-csrf.js';
import { clientAddress } from './client-address.js';
import { errorPage, loginPage, pageCsp } from './login-page.js';

/**
 * `GET /oauth2/authorize` shows the sign-in form for a validated request; `POST /oauth2/authorize` checks
 * the password (throttled, like every login) and redirects back with a code. The rules live in
 * services/auth/authorize.ts; this file only speaks HTML and redirects.
 */

/** The request parameters the form carries back in hidden fields. */
const CARRIED = [
  'response_type',
  'client_id',
  'redirect_uri',
  'code_challenge',
  'code_challenge_method',
  'state',
  'scope',
] as const;

function html(
  c: Context<AppEnv>,
  body: (nonce: string) => string,
  status: ContentfulStatusCode,
  redirectUri?: string,
): Response {
  const nonce = randomSecret(16);
  c.header('Content-Security-Policy', pageCsp(nonce, redirectUri));
  c.header('Cache-Control', 'no-store');
  return c.html(body(nonce), status);
}

function redirect(c: Context<AppEnv>, location: string): Response {
  c.header('Cache-Control', 'no-store');
  return c.redirect(location, 302);
}

/** Show the form for a request, with an optional error and HTTP status (401 wrong password, and so on). */
async function showForm(
  c: Context<AppEnv>,
  request: AuthorizeRequest,
  params: URLSearchParams,
  status: ContentfulStatusCode,
  error?: string,
  username?: string,
) {
  const hidden: Record<string, string | undefined> = {};
  for (const name of CARRIED) hidden[name] = params.get(name) ?? undefined;
  hidden.csrf = await issueFormToken(c, requestBinding(hidden));
  return html(
    c,
    (nonce) => loginPage({ clientName: request.client.name, scope: request.scope, hidden, error, username, nonce }),
    status,
    request.redirectUri,
  );
}

/** Validate, answering a page or a redirect for a refused request. */
async function validated(c: Context<AppEnv>, params: URLSearchParams): Promise<AuthorizeRequest | Response> {
  const { ctx, auth } = c.get('services');
  try {
    return await checkAuthorizeRequest(ctx, params, auth.issuer);
  } catch (error) {
    if (error instanceof AuthorizePageError) return html(c, (nonce) => errorPage(error.message, nonce), 400);
    if (error instanceof AuthorizeRedirect) return redirect(c, error.location);
    throw error;
  }
}

export function mountAuthorizeRoutes(app: Hono<AppEnv>): void {
  app.get('/oauth2/authorize', async (c) => {
    c.set('operationId', 'oauth2Authorize');
    const params = new URL(c.req.url).searchParams;
    const request = await validated(c, params);
    if (request instanceof Response) return request;
    return showForm(c, request, params, 200);
  });

  app.post('/oauth2/authorize', async (c) => {
    c.set('operationId', 'oauth2Authorize');
    const { ctx, auth } = c.get('services');
    const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/x-www-form-urlencoded') {
      return html(
        c,
        (nonce) => errorPage('The sign-in form must be posted as application/x-www-form-urlencoded.', nonce),
        400,
      );
    }
    const params = new URLSearchParams(await c.req.text());
    const request = await validated(c, params);
    if (request instanceof Response) return request;

    const carried: Record<string, string | undefined> = {};
    for (const name of CARRIED) carried[name] = params.get(name) ?? undefined;
    if (!(await checkFormToken(c, params.get('csrf') ?? undefined, requestBinding(carried)))) {
      return showForm(
        c,
        request,
        params,
        403,
        'This sign-in form has expired or was not opened in this browser. Please sign in again.',
      );
    }
    if (params.get('action') === 'cancel') {
      return redirect(
        c,
        errorRedirect(request, auth.issuer, 'access_denied', 'The user cancelled the sign-in').location,
      );
    }
    const username = params.get('username') ?? '';
    const password = params.get('password') ?? '';
    if (!username || !password)
      return showForm(c, request, params, 400, 'Enter your user name and password.', username);
    try {
      const principal = await auth.checkPassword(username.slice(0, 64), password, clientAddress(c));
      return redirect(
        c,
        await approveAuthorization(
          ctx,
          request,
          {
            accountId: principal.accountId!,
            username: principal.username,
            role: principal.role,
            credentialVersion: principal.credentialVersion,
          },
          auth.issuer,
        ),
      );
    } catch (error) {
      if (error instanceof DomainError && error.code === 'unauthorized') {
        // One message for every cause, so the form does not reveal which accounts exist or are disabled.
        return showForm(c, request, params, 401, 'Wrong user name or password.', username);
      }
      if (error instanceof DomainError && error.code === 'too-many-requests') {
        const wait = Math.max(1, Math.ceil(Number(error.extras.retryAfterSeconds ?? 1)));
        c.header('Retry-After', String(wait));
        return showForm(c, request, params, 429, `Too many failed sign-ins. Try again in ${wait} seconds.`, username);
      }
      if (error instanceof ScopeNotHeld)
        return showForm(c, request, params, 403, `${error.message} Sign in with another account.`);
      throw error;
    }
  });
}
