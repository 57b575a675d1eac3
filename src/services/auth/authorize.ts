import type { Role } from '../../auth/roles.js';
import type { ServiceContext } from '../context.js';
import { issueCode } from './authorization-codes.js';
import { OAuthError, type OAuthErrorCode } from './oauth-error.js';
import { findClient, type OAuthClient } from './oauth-clients.js';
import { isValidChallenge } from './pkce.js';
import { redirectUriAllowed } from './redirect-uris.js';
import { parseScope, weakerRole } from './scope.js';

/**
 * The authorization endpoint's rules (RFC 6749 4.1.1, 4.1.2, 4.1.2.1; RFC 7636; RFC 9207). The order of the
 * checks matters: until client_id and redirect_uri are proven to belong together, nothing may redirect,
 * because redirecting to an unverified URI would make us an open redirector (RFC 6749 4.1.2.1, 10.15).
 */

/** A validated authorization request, ready to show the login form for. */
export interface AuthorizeRequest {
  client: OAuthClient;
  redirectUri: string;
  state?: string;
  codeChallenge: string;
  /** The scope asked for, if any; otherwise the token gets what account and client allow. */
  scope?: Role;
}

/** A request that cannot be sent back to the client (bad client or redirect URI): shown as a page. */
export class AuthorizePageError extends Error {
  override name = 'AuthorizePageError';
}

/** A request refused by redirecting to the client with `error=` (RFC 6749 4.1.2.1). */
export class AuthorizeRedirect extends Error {
  override name = 'AuthorizeRedirect';
  constructor(readonly location: string) {
    super(`redirect to ${location}`);
  }
}

/** Append parameters to a redirect URI without re-encoding what the client registered. */
function withParams(uri: string, params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) query.append(key, value);
  return `${uri}${uri.includes('?') ? '&' : '?'}${query.toString()}`;
}

/** The redirect that reports an error to the client; `iss` lets it detect mix-up attacks (RFC 9207). */
export function errorRedirect(
  request: { redirectUri: string; state?: string },
  issuer: string,
  error: OAuthErrorCode,
  description: string,
): AuthorizeRedirect {
  return new AuthorizeRedirect(
    withParams(request.redirectUri, { error, error_description: description, state: request.state, iss: issuer }),
  );
}

const MAX_STATE = 1024;

/**
 * Validate an authorization request (the GET's query, or the POST's form fields, which repeat it).
 * Throws {@link AuthorizePageError} or {@link AuthorizeRedirect}.
 */
export async function checkAuthorizeRequest(
  ctx: ServiceContext,
  params: URLSearchParams,
  issuer: string,
): Promise<AuthorizeRequest> {
  // RFC 6749 3.1: parameters must not be repeated; an empty value counts as absent.
  const one = (name: string): string | undefined => params.get(name) || undefined;
  const page = (message: string) => new AuthorizePageError(message);

  if (params.getAll('client_id').length > 1) throw page('client_id is given more than once.');
  if (params.getAll('redirect_uri').length > 1) throw page('redirect_uri is given more than once.');
  const clientId = one('client_id');
  if (!clientId) throw page('The request names no client (client_id is missing).');
  const client = await findClient(ctx, clientId);
  if (!client) throw page('The request names an unknown client.');
  const redirectUri = one('redirect_uri');
  if (!redirectUri) throw page('The request has no redirect_uri.');
  if (!redirectUriAllowed(client.redirectUris, redirectUri))
    throw page('The redirect_uri is not registered for this client.');

  // From here on the client is known to own the redirect URI: errors go back to it.
  const rawState = one('state');
  const state = rawState?.slice(0, MAX_STATE);
  const fail = (error: OAuthErrorCode, description: string) =>
    errorRedirect({ redirectUri, state }, issuer, error, description);
  for (const name of ['response_type', 'code_challenge', 'code_challenge_method', 'scope', 'state']) {
    if (params.getAll(name).length > 1) throw fail('invalid_request', `${name} is given more than once`);
  }
  if (rawState !== undefined && rawState.length > MAX_STATE)
    throw fail('invalid_request', `state is longer than ${MAX_STATE} characters`);
  const responseType = one('response_type');
  if (!responseType) throw fail('invalid_request', 'response_type is required');
  if (responseType !== 'code') throw fail('unsupported_response_type', 'Only response_type=code is supported');
  if (!client.grantTypes.includes('authorization_code'))
    throw fail('unauthorized_client', 'This client may not use the authorization code flow');
  const codeChallenge = one('code_challenge');
  if (!codeChallenge)
    throw fail('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256');
  if (one('code_challenge_method') !== 'S256') {
    throw fail('invalid_request', 'code_challenge_method must be S256; plain is not supported');
  }
  if (!isValidChallenge(codeChallenge))
    throw fail('invalid_request', 'code_challenge must be 43 base64url characters (the S256 of the verifier)');
  let scope: Role | undefined;
  try {
    scope = parseScope(one('scope'));
  } catch (error) {
    if (error instanceof OAuthError) throw fail(error.error, error.description);
    throw error;
  }
  if (scope && weakerRole(scope, client.role) !== scope)
    throw fail('invalid_scope', `This client may not ask for more than ${client.role}`);
  return { client, redirectUri, state, codeChallenge, scope };
}

/** The signed-in account asked for a scope it does not hold; the form shows this and lets another account try. */
export class ScopeNotHeld extends Error {
  override name = 'ScopeNotHeld';
}

/**
 * The account has signed in: issue the code and return where to send the browser. The scope is the one
 * requested, or what both account and client allow when none was.
 */
export async function approveAuthorization(
  ctx: ServiceContext,
  request: AuthorizeRequest,
  account: { accountId: number; username: string; role: Role; credentialVersion: number },
  issuer: string,
): Promise<string> {
  const ceiling = weakerRole(account.role, request.client.role);
  if (request.scope && weakerRole(request.scope, ceiling) !== request.scope) {
    throw new ScopeNotHeld(`The account '${account.username}' cannot grant the scope ${request.scope}.`);
  }
  const code = await issueCode(ctx, {
    clientId: request.client.clientId,
    accountId: account.accountId,
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    scope: request.scope ?? ceiling,
    credentialVersion: account.credentialVersion,
  });
  ctx.log.info('oauth authorization granted', { clientId: request.client.clientId, accountId: account.accountId });
  return withParams(request.redirectUri, { code, state: request.state, iss: issuer });
}
