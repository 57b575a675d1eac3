import { serve } from '@hono/node-server';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, adminAuth, bootForTest, serviceDialects } from '../support/databases.js';
import { cookieOf, hiddenFields } from '../support/oauth-flow.js';
import { freePorts } from '../support/ports.js';

/**
 * A standard OAuth client library, not our own helpers, finds the server through discovery and completes
 * the authorization code flow with PKCE and a refresh, over a real socket: what an integrator's app does.
 */
for (const dialect of serviceDialects) {
  describe(`OAuth discovery with openid-client on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    let base: string;
    let stop: () => Promise<void>;

    beforeAll(async () => {
      const [port] = await freePorts(1);
      base = `http://127.0.0.1:${port}`;
      booted = await bootForTest(dialect, { BIMS_BASE_URL: base });
      await new Promise<void>((resolve) => {
        const server = serve({ fetch: booted.app.fetch, port: port!, hostname: '127.0.0.1' }, () => resolve());
        stop = () => new Promise<void>((done) => server.close(() => done()));
      });
    });
    afterAll(async () => {
      await stop?.();
      await booted?.close();
    });

    /** Sign in on the authorize page as a browser would; the redirect the client receives. */
    async function browserSignIn(authorizeUrl: URL, username: string, password: string): Promise<URL> {
      const page = await fetch(authorizeUrl);
      expect(page.status).toBe(200);
      const fields = hiddenFields(await page.text());
      const post = await fetch(`${base}/oauth2/authorize`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieOf(page) },
        body: new URLSearchParams({ ...fields, username, password, action: 'login' }),
      });
      expect(post.status).toBe(302);
      return new URL(post.headers.get('location')!);
    }

    it('is no OpenID provider: OpenID discovery finds no document, RFC 8414 discovery does', async () => {
      const openid = await fetch(`${base}/.well-known/openid-configuration`);
      expect(openid.status).toBe(404);
      expect((await openid.json()).type).toMatch(/route-not-found$/);
      await expect(
        client.discovery(new URL(base), 'bims-cli', undefined, client.None(), {
          algorithm: 'oidc',
          execute: [client.allowInsecureRequests],
        }),
      ).rejects.toThrow();
    });

    for (const algorithm of ['oauth2'] as const) {
      it(`discovers the server (${algorithm}) and runs code + PKCE, then a refresh, for a public client`, async () => {
        const config = await client.discovery(new URL(base), 'bims-cli', undefined, client.None(), {
          algorithm,
          execute: [client.allowInsecureRequests],
        });
        const metadata = config.serverMetadata();
        expect(metadata.issuer).toBe(base);
        expect(metadata.token_endpoint).toBe(`${base}/oauth2/token`);
        expect(metadata.code_challenge_methods_supported).toEqual(['S256']);

        const verifier = client.randomPKCECodeVerifier();
        const state = client.randomState();
        const redirectUri = 'http://127.0.0.1:53682/callback';
        const url = client.buildAuthorizationUrl(config, {
          redirect_uri: redirectUri,
          scope: 'ADMIN',
          code_challenge: await client.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
          state,
        });
        const callback = await browserSignIn(url, 'admin', ADMIN_PASSWORD);
        const tokens = await client.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: verifier,
          expectedState: state,
        });
        expect(tokens.token_type.toLowerCase()).toBe('bearer');
        expect(tokens.scope).toBe('ADMIN');
        const accounts = await fetch(`${base}/admin/accounts`, {
          headers: { authorization: `Bearer ${tokens.access_token}` },
        });
        expect(accounts.status).toBe(200);

        const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
        expect(refreshed.access_token).not.toBe(tokens.access_token);
        expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
        const again = await fetch(`${base}/admin/accounts`, {
          headers: { authorization: `Bearer ${refreshed.access_token}` },
        });
        expect(again.status).toBe(200);
      });
    }

    it('a token without the scope is answered 403 with an insufficient_scope challenge naming the scope', async () => {
      const create = await fetch(`${base}/admin/accounts/create`, {
        method: 'POST',
        headers: { authorization: adminAuth, 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'ulla', password: 'ulla-password', role: 'USER' }),
      });
      expect(create.status).toBe(201);
      const config = await client.discovery(new URL(base), 'ulla', 'ulla-password', undefined, {
        algorithm: 'oauth2',
        execute: [client.allowInsecureRequests],
      });
      const tokens = await client.clientCredentialsGrant(config);
      const res = await fetch(`${base}/admin/accounts`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.headers.get('www-authenticate')).toBe(
        'Bearer realm="bims", error="insufficient_scope", scope="ADMIN"',
      );
    });

    it('the token endpoint refuses a body it does not declare with 415', async () => {
      const res = await fetch(`${base}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'grant_type=client_credentials',
      });
      expect(res.status).toBe(415);
      expect(await res.json()).toMatchObject({ error: 'invalid_request' });
    });
  });
}

describe('discovery follows BIMS_AUTH_URL', () => {
  it('names the auth URL as issuer and endpoint base in both documents', async () => {
    const booted = await bootForTest('pglite', {
      BIMS_BASE_URL: 'https://api.example',
      BIMS_AUTH_URL: 'https://auth.example',
    });
    try {
      for (const path of ['/.well-known/oauth-authorization-server']) {
        const res = await booted.app.request(path);
        expect(res.status).toBe(200);
        const body = await res.json();
        expect(body).toMatchObject({
          issuer: 'https://auth.example',
          authorization_endpoint: 'https://auth.example/oauth2/authorize',
          token_endpoint: 'https://auth.example/oauth2/token',
          jwks_uri: 'https://auth.example/oauth2/jwks',
          grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
          response_types_supported: ['code'],
          code_challenge_methods_supported: ['S256'],
          scopes_supported: ['ADMIN', 'ADJUDICATOR', 'USER'],
        });
        expect(body.token_endpoint_auth_methods_supported).toEqual(
          expect.arrayContaining(['client_secret_basic', 'client_secret_post', 'none']),
        );
      }
    } finally {
      await booted.close();
    }
  });
});
