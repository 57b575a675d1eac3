import type { Role } from '../../auth/roles.js';
import { findAccountForGrant } from '../../db/repositories/accounts.js';
import type { ServiceContext } from '../context.js';
import type { AuthService } from './auth-service.js';
import { redeemCode } from './authorization-codes.js';
import { authenticateClient, invalidClient, presentedClient, throttled, type BasicCredentials } from './client-auth.js';
import { OAuthError, invalidGrant, invalidRequest } from './oauth-error.js';
import { findClient, type OAuthClient } from './oauth-clients.js';
import { issueRefreshToken, refreshTokenClient, rotateRefreshToken } from './refresh-tokens.js';
import { narrowScope, weakerRole } from './scope.js';

/**
 * The token endpoint's rules (RFC 6749 section 4 and 6), free of HTTP: the route hands over the decoded
 * parameters and Basic credentials, and turns an {@link OAuthError} into the RFC 6749 5.2 answer.
 */

/** RFC 6749 5.1, as `AccessTokenResponse` documents it. */
interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope: Role;
}

export interface TokenInput {
  /** Form (or JSON) parameters, each given once. */
  params: Record<string, string>;
  basic: BasicCredentials;
  /** The caller's address, for the login throttle. */
  address: string;
}

interface Deps {
  ctx: ServiceContext;
  auth: AuthService;
}

/** Answer a token request. Throws {@link OAuthError} for every refusal; anything else is a server fault. */
export async function issueTokens(deps: Deps, input: TokenInput): Promise<TokenResponse> {
  const grantType = input.params.grant_type;
  if (!grantType) throw invalidRequest('grant_type is required');
  switch (grantType) {
    case 'authorization_code':
      return authorizationCodeGrant(deps, input);
    case 'refresh_token':
      return refreshTokenGrant(deps, input);
    case 'client_credentials':
      return clientCredentialsGrant(deps, input);
    default:
      throw new OAuthError(
        'unsupported_grant_type',
        `Unsupported grant_type '${grantType.slice(0, 40)}'; use authorization_code, refresh_token or client_credentials`,
      );
  }
}

function required(params: Record<string, string>, name: string): string {
  const value = params[name];
  if (value === undefined || value === '') throw invalidRequest(`${name} is required`);
  return value;
}

/** The account a user grant acts for; a deleted or disabled account ends the grant. */
async function activeAccount(ctx: ServiceContext, accountId: number) {
  const account = await findAccountForGrant(ctx.db, accountId);
  if (!account || !account.enabled) throw invalidGrant('The account of this grant is gone or disabled');
  return account;
}

/**
 * What a user grant may become: the grant, the account's current role and the client each cap the token,
 * and the request may lower it further. Runs before the code or refresh token is consumed.
 */
async function userGrant(
  deps: Deps,
  client: OAuthClient,
  grant: { accountId: number; scope: string; familyId: string; credentialVersion: number },
  requested: string | undefined,
) {
  const account = await activeAccount(deps.ctx, grant.accountId);
  // A code or refresh token won before a change of password, role or status is worth nothing after it.
  if (account.credential_version !== grant.credentialVersion)
    throw invalidGrant("The account's password, role or status changed after this grant was issued");
  const ceiling = weakerRole(weakerRole(grant.scope as Role, account.role), client.role);
  return { account, ceiling, scope: narrowScope(requested, ceiling), familyId: grant.familyId };
}

async function userTokens(
  deps: Deps,
  client: OAuthClient,
  granted: Awaited<ReturnType<typeof userGrant>>,
  refreshToken: string,
): Promise<TokenResponse> {
  const { account, scope, familyId } = granted;
  const access = await deps.auth.accessToken(
    { accountId: account.id, username: account.username, credentialVersion: account.credential_version },
    scope,
    client.clientId,
    { sid: familyId },
  );
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: deps.ctx.config.BIMS_ACCESS_TOKEN_SECONDS,
    refresh_token: refreshToken,
    scope,
  };
}

/** RFC 6749 4.1.3 with RFC 7636: the code, its redirect URI and the PKCE verifier. */
async function authorizationCodeGrant(deps: Deps, { params, basic, address }: TokenInput): Promise<TokenResponse> {
  const presented = presentedClient(params, basic);
  const code = required(params, 'code');
  const redirectUri = required(params, 'redirect_uri');
  const codeVerifier = required(params, 'code_verifier');
  const client = await authenticateClient(deps.ctx, deps.auth, presented, 'authorization_code', address);
  const granted = await redeemCode(deps.ctx, { code, clientId: client.clientId, redirectUri, codeVerifier }, (grant) =>
    userGrant(deps, client, grant, params.scope),
  );
  // The family keeps the ceiling, so a later refresh may ask again for anything up to it.
  const refreshToken = await issueRefreshToken(deps.ctx, {
    accountId: granted.account.id,
    clientId: client.clientId,
    scope: granted.ceiling,
    familyId: granted.familyId,
    credentialVersion: granted.account.credential_version,
  });
  return userTokens(deps, client, granted, refreshToken);
}

/** RFC 6749 6, rotating. A public client may omit client_id: the token itself names its client. */
async function refreshTokenGrant(deps: Deps, { params, basic, address }: TokenInput): Promise<TokenResponse> {
  const token = required(params, 'refresh_token');
  let presented = presentedClient(params, basic);
  if (!presented) {
    const clientId = await refreshTokenClient(deps.ctx, token);
    if (!clientId) throw invalidGrant('The refresh token is unknown');
    const owner = await findClient(deps.ctx, clientId);
    if (owner?.confidential)
      throw invalidClient(undefined, 'This refresh token belongs to a confidential client, which must authenticate');
    presented = { clientId, via: 'body' };
  }
  const client = await authenticateClient(deps.ctx, deps.auth, presented, 'refresh_token', address);
  const { result: granted, refreshToken } = await rotateRefreshToken(deps.ctx, token, client.clientId, (grant) =>
    userGrant(deps, client, grant, params.scope),
  );
  return userTokens(deps, client, granted, refreshToken);
}

/**
 * RFC 6749 4.4. The credentials are those of a registered confidential client or, so that any account can
 * obtain a Bearer token without a registration, an account's user name and password. A registered client
 * id takes precedence over an account of the same name. No refresh token is issued (RFC 6749 4.4.3): the
 * client can simply authenticate again.
 */
async function clientCredentialsGrant(deps: Deps, { params, basic, address }: TokenInput): Promise<TokenResponse> {
  const presented = presentedClient(params, basic);
  if (!presented || presented.secret === undefined)
    throw invalidClient(
      presented,
      'client_credentials needs client authentication (Basic or client_id and client_secret)',
    );
  const expires_in = deps.ctx.config.BIMS_ACCESS_TOKEN_SECONDS;
  const registered = await findClient(deps.ctx, presented.clientId);
  if (registered) {
    if (!registered.confidential)
      throw new OAuthError('unauthorized_client', 'A public client cannot use client_credentials');
    const client = await authenticateClient(deps.ctx, deps.auth, presented, 'client_credentials', address);
    const scope = narrowScope(params.scope, client.role);
    const access = await deps.auth.accessToken({ clientId: client.clientId }, scope, client.clientId);
    return { access_token: access, token_type: 'Bearer', expires_in, scope };
  }
  const secret = presented.secret;
  const principal = await throttled(presented, async () => {
    try {
      return await deps.auth.checkPassword(presented.clientId, secret, address);
    } catch (error) {
      // An account password sent in Basic without the form-encoding RFC 6749 asks for (curl -u does this).
      if (!presented.raw) throw error;
      return deps.auth.checkPassword(presented.raw.clientId, presented.raw.secret, address);
    }
  });
  const scope = narrowScope(params.scope, principal.role);
  const access = await deps.auth.accessToken(
    { accountId: principal.accountId!, username: principal.username, credentialVersion: principal.credentialVersion },
    scope,
    principal.username,
  );
  return { access_token: access, token_type: 'Bearer', expires_in, scope };
}
