import type { Hono } from 'hono';
import { OpenApiGeneratorV31, type OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { AccessTokenResponse, LoginRequest, LoginResponse, OAuthError, TokenRequest } from '../schemas/auth.js';
import { ProblemSchema } from '../schemas/common.js';
import { namedModels } from '../schemas/models.js';
import type { Surface } from '../auth/roles.js';
import type { AppEnv } from './env.js';
import { typedBranches } from './typed-branches.js';
import { withDeclaredTags } from './document-tags.js';
import { docsPage } from './docs-page.js';
import { PROBLEM_BASE } from './problem.js';
import type { ErrorCode } from '../services/errors.js';

const surfaceDocPath: Record<Surface, string> = {
  admin: '/admin/openapi.json',
  root: '/openapi.json',
  user: '/user/openapi.json',
};
const surfaceTitle: Record<Surface, string> = {
  admin: 'BIMS admin surface (/admin)',
  root: 'BIMS root surface (/ and /adjudicator)',
  user: 'BIMS user surface (/user)',
};

/** Add what every surface document shares: security schemes, login, the token endpoint, named models. */
function completeRegistry(registry: OpenAPIRegistry, surface: Surface, authUrl: string): void {
  // Every document carries the seed's six schemes, including those of roles its own operations do not name
  // (Redocly's no-unused-components warns about them; the seed's section 1 lists them for every surface).
  for (const role of ['admin', 'adjudicator', 'user'] as const) {
    const scope = role.toUpperCase();
    registry.registerComponent('securitySchemes', `${role}-basic`, { type: 'http', scheme: 'basic' });
    registry.registerComponent('securitySchemes', `${role}-oauth`, {
      type: 'oauth2',
      flows: {
        authorizationCode: {
          authorizationUrl: `${authUrl}/oauth2/authorize`,
          tokenUrl: `${authUrl}/oauth2/token`,
          refreshUrl: `${authUrl}/oauth2/token`,
          scopes: {
            [scope]: `${scope}: access to ${role === 'admin' ? 'admin, adjudicator and user' : role === 'adjudicator' ? 'adjudicator and user' : 'user'} endpoints`,
          },
        },
        clientCredentials: { tokenUrl: `${authUrl}/oauth2/token`, scopes: { [scope]: `${scope} scope` } },
      },
    });
  }
  registry.register('Problem', ProblemSchema);
  for (const model of namedModels) if (model.surfaces.includes(surface)) registry.register(model.name, model.schema);
  registry.registerPath({
    method: 'post',
    path: '/login',
    operationId: 'login',
    tags: ['Login and tokens'],
    summary: 'Authenticates with user name and password; returns authentication type and granted authorities',
    description:
      'No surface prefix. Credentials as a JSON body, or as an HTTP Basic header with no body. Failed attempts are throttled (429).',
    security: [],
    request: { body: { required: false, content: { 'application/json': { schema: LoginRequest } } } },
    responses: {
      200: { description: 'Authenticated', content: { 'application/json': { schema: LoginResponse } } },
      400: problemAnswer('Invalid body (problem+json naming the fields)', 'validation'),
      401: problemAnswer('Bad credentials', 'unauthorized'),
      413: problemAnswer('Request body too large', 'payload-too-large'),
      415: problemAnswer('The body is not application/json', 'unsupported-media-type'),
      429: problemAnswer('Too many failed attempts; retry after Retry-After', 'too-many-requests'),
      500: problemAnswer('Internal error, recorded in the exception log', 'internal'),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/oauth2/token',
    operationId: 'oauth2Token',
    tags: ['Login and tokens'],
    summary: 'Token endpoint',
    description:
      'No surface prefix. RFC 6749, form-encoded (a JSON object of strings is accepted too). Grants: authorization_code (PKCE S256 required; codes live 60 s and are single-use), refresh_token (rotating; reuse of a replaced token revokes the family), client_credentials (a registered client id and secret, or an account user name and password, as Basic or form fields). `scope` (ADMIN, ADJUDICATOR or USER) may narrow the token, never widen it. Client authentication: HTTP Basic (client_secret_basic), client_id and client_secret fields (client_secret_post), or client_id alone for the public clients (none). Any other body media type answers 415. Errors are RFC 6749 5.2 JSON. The endpoints are published at /.well-known/oauth-authorization-server (RFC 8414).',
    security: [],
    request: {
      body: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': { schema: TokenRequest },
          'application/json': { schema: TokenRequest },
        },
      },
    },
    responses: {
      200: { description: 'Tokens', content: { 'application/json': { schema: AccessTokenResponse } } },
      400: { description: 'RFC 6749 error', content: { 'application/json': { schema: OAuthError } } },
      401: { description: 'Bad client credentials', content: { 'application/json': { schema: OAuthError } } },
      413: problemAnswer('Request body too large', 'payload-too-large'),
      415: {
        description: 'The body is neither form-encoded nor JSON (RFC 6749 error invalid_request)',
        content: { 'application/json': { schema: OAuthError } },
      },
      429: {
        description: 'Too many failed client authentications (RFC 6749 error invalid_client; Retry-After)',
        content: { 'application/json': { schema: OAuthError } },
      },
      500: problemAnswer('Internal error, recorded in the exception log', 'internal'),
    },
  });
}

/** A problem+json answer of the unprefixed routes, naming its problem type as the operations' answers do. */
function problemAnswer(description: string, code: ErrorCode) {
  return {
    description: `${description}. Problem type: ${PROBLEM_BASE}/${code}`,
    content: { 'application/problem+json': { schema: ProblemSchema } },
  };
}

/** Serve one OpenAPI 3.1 document per surface and the interactive docs page at /docs. */
export function mountDocs(
  app: Hono<AppEnv>,
  registries: Record<Surface, OpenAPIRegistry>,
  readAsset?: (name: string) => Promise<Uint8Array | null>,
): void {
  const cache = new Map<Surface, unknown>();
  const documentFor = (surface: Surface, authUrl: string) => {
    let doc = cache.get(surface);
    if (!doc) {
      completeRegistry(registries[surface], surface, authUrl);
      doc = withDeclaredTags(
        typedBranches(
          new OpenApiGeneratorV31(registries[surface].definitions).generateDocument({
            openapi: '3.1.0',
            info: {
              title: surfaceTitle[surface],
              version: '0.1.0',
              license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
              contact: { name: 'BIMS maintainers', url: 'https://bims.dev' },
              description:
                'Biometric Identity Management Service. Errors are application/problem+json (RFC 9457). Lists take page (from 0), size (1..1000, default 20) and sort=field,asc|desc.',
            },
            servers: [{ url: '/' }],
          }),
        ),
      );
      cache.set(surface, doc);
    }
    return doc;
  };

  for (const [surface, path] of Object.entries(surfaceDocPath) as [Surface, string][]) {
    app.get(path, (c) => {
      const authUrl = c.get('services').auth.issuer;
      return c.json(documentFor(surface, authUrl) as object);
    });
  }

  app.get('/docs', (c) => {
    c.header(
      'Content-Security-Policy',
      "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
    );
    return c.html(docsPage(surfaceDocPath));
  });
  app.get('/docs/assets/:name', async (c) => {
    const name = c.req.param('name');
    const allowed = [
      'swagger-ui.css',
      'swagger-ui-bundle.js',
      'swagger-ui-standalone-preset.js',
      'oauth2-redirect.html',
      'oauth2-redirect.js',
      'docs.js',
    ];
    if (!allowed.includes(name) || !readAsset) return c.notFound();
    const bytes = name === 'docs.js' ? new TextEncoder().encode(docsScript) : await readAsset(name);
    if (!bytes) return c.notFound();
    const type = name.endsWith('.css') ? 'text/css' : name.endsWith('.html') ? 'text/html' : 'text/javascript';
    c.header('Cache-Control', 'public, max-age=3600');
    // Swagger UI's OAuth redirect page runs an inline script; it is opened as a pop-up, never framed.
    if (name.endsWith('.html'))
      c.header(
        'Content-Security-Policy',
        "default-src 'self'; script-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
      );
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, { 'Content-Type': `${type}; charset=utf-8` });
  });
}

/** The page script (served from our origin so the CSP needs no inline scripts). */
const docsScript = `
window.addEventListener('load', function () {
  var urls = JSON.parse(document.getElementById('bims-docs').dataset.urls);
  window.ui = SwaggerUIBundle({
    urls: urls,
    'urls.primaryName': urls[0].name,
    dom_id: '#swagger-ui',
    deepLinking: true,
    displayOperationId: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
    oauth2RedirectUrl: window.location.origin + '/docs/assets/oauth2-redirect.html',
    persistAuthorization: false,
  });
  window.ui.initOAuth({ clientId: 'bims-docs', usePkceWithAuthorizationCodeGrant: true });
});
`;
