import type { Context, Hono } from 'hono';
import type { AppEnv } from './env.js';

/** The scopes a token may carry, strongest first (ADMIN covers ADJUDICATOR covers USER). */
const OAUTH_SCOPES = ['ADMIN', 'ADJUDICATOR', 'USER'] as const;

/**
 * RFC 8414 authorization server metadata, built from the issuer (`BIMS_AUTH_URL`, else the base URL), so that
 * standard clients (openid-client, Swagger UI, oauth2-proxy) find the endpoints instead of being told them.
 * It states only what the token and authorize endpoints do: the code flow with PKCE S256 only, rotating
 * refresh tokens, client credentials; public clients (`none`) and secrets by Basic or form fields; token
 * revocation (RFC 7009) with the same client authentication.
 */
function authorizationServerMetadata(issuer: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth2/authorize`,
    token_endpoint: `${issuer}/oauth2/token`,
    revocation_endpoint: `${issuer}/oauth2/revoke`,
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    jwks_uri: `${issuer}/oauth2/jwks`,
    scopes_supported: [...OAUTH_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    // The authorize redirect carries `iss` (RFC 9207), so clients can tell issuers apart.
    authorization_response_iss_parameter_supported: true,
  };
}

/**
 * `/.well-known/oauth-authorization-server`, no credentials. There is no `/.well-known/openid-configuration`:
 * BIMS is not an OpenID provider (no ID tokens, no `openid` scope, no userinfo), and a document saying it
 * was led OpenID clients to ask for what it refuses (issue 32).
 */
export function mountOAuthDiscovery(app: Hono<AppEnv>): void {
  app.get('/.well-known/oauth-authorization-server', (c: Context<AppEnv>) => {
    c.header('Cache-Control', 'public, max-age=300');
    return c.json(authorizationServerMetadata(c.get('services').auth.issuer));
  });
}
