import type { Context, Hono } from 'hono';
import type { AppEnv } from './env.js';

/** The scopes a token may carry, strongest first (ADMIN covers ADJUDICATOR covers USER). */
export const OAUTH_SCOPES = ['ADMIN', 'ADJUDICATOR', 'USER'] as const;

/**
 * RFC 8414 authorization server metadata, built from the issuer (`BIMS_AUTH_URL`, else the base URL), so that
 * standard clients (openid-client, Swagger UI, oauth2-proxy) find the endpoints instead of being told them.
 * It states only what the token and authorize endpoints do: the code flow with PKCE S256 only, rotating
 * refresh tokens, client credentials; public clients (`none`) and secrets by Basic or form fields.
 */
export function authorizationServerMetadata(issuer: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth2/authorize`,
    token_endpoint: `${issuer}/oauth2/token`,
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
 * The OpenID-style subset: the same endpoints under the name OpenID clients look for. BIMS issues no ID
 * tokens and has no userinfo endpoint; `subject_types_supported` and the signing algorithm are what those
 * clients require to be present, and are true of the access tokens (ES256 JWTs, one subject per account).
 */
export function openidConfiguration(issuer: string) {
  return {
    ...authorizationServerMetadata(issuer),
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['ES256'],
  };
}

/** `/.well-known/oauth-authorization-server` and `/.well-known/openid-configuration`, no credentials. */
export function mountOAuthDiscovery(app: Hono<AppEnv>): void {
  const serve = (build: (issuer: string) => object) => (c: Context<AppEnv>) => {
    c.header('Cache-Control', 'public, max-age=300');
    return c.json(build(c.get('services').auth.issuer));
  };
  app.get('/.well-known/oauth-authorization-server', serve(authorizationServerMetadata));
  app.get('/.well-known/openid-configuration', serve(openidConfiguration));
}
