import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { registerClient } from '../../src/services/auth/oauth-clients.js';
import { ADMIN_PASSWORD, adminAuth, basic, bootForTest, serviceDialects } from '../support/databases.js';
import { loginWithCode, postForm } from '../support/oauth-flow.js';

/**
 * POST /oauth2/revoke (RFC 7009, issue 32): a client that logs out revokes its refresh token (the whole login
 * ends: refresh and access tokens) or an access token (refused from the next request on); only its own tokens;
 * an unknown token is a 200 too. Across two service processes: test/security/token-revocation.test.ts.
 * PGlite only (serviceDialects): the revocation's SQL runs over both dialects in test/db/repositories-auth.test.ts,
 * and across two processes on PostgreSQL in token-revocation.test.ts; what is asserted here is the endpoint.
 */
for (const dialect of serviceDialects) {
  describe(`token revocation on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    const app = { request: (path: string, init?: RequestInit) => booted.app.request(path, init) };
    const revoke = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      postForm(app, '/oauth2/revoke', fields, headers);
    const statusWith = async (token: unknown) => {
      const res = await booted.app.request('/admin/accounts/count', {
        headers: { authorization: `Bearer ${String(token)}` },
      });
      await res.arrayBuffer();
      return res.status;
    };
    const clientCredentials = async (auth: string) => {
      const res = await postForm(app, '/oauth2/token', { grant_type: 'client_credentials' }, { authorization: auth });
      expect(res.status).toBe(200);
      return String((await res.json()).access_token);
    };

    beforeAll(async () => {
      booted = await bootForTest(dialect);
    });
    afterAll(async () => {
      await booted?.close();
    });
    afterEach(async () => {
      await booted.services.auth.throttle.forget('unknown');
    });

    it('is published in the RFC 8414 metadata', async () => {
      const metadata = await (await booted.app.request('/.well-known/oauth-authorization-server')).json();
      expect(metadata).toMatchObject({
        revocation_endpoint: expect.stringMatching(/\/oauth2\/revoke$/),
        revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      });
    });

    it('a refresh token ends its whole login: the refresh token, its successors and the access tokens', async () => {
      const login = await loginWithCode(app, 'admin', ADMIN_PASSWORD, { scope: 'ADMIN' });
      expect(login.res.status).toBe(200);
      const other = await loginWithCode(app, 'admin', ADMIN_PASSWORD, { scope: 'ADMIN' });
      expect(await statusWith(login.body.access_token)).toBe(200);
      const res = await revoke({ token: String(login.body.refresh_token), client_id: 'bims-docs' });
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.text()).toBe('');
      expect(await statusWith(login.body.access_token)).toBe(401);
      const refreshed = await postForm(app, '/oauth2/token', {
        grant_type: 'refresh_token',
        refresh_token: String(login.body.refresh_token),
        client_id: 'bims-docs',
      });
      expect(refreshed.status).toBe(400);
      expect((await refreshed.json()).error).toBe('invalid_grant');
      // Another login of the same account is untouched.
      expect(await statusWith(other.body.access_token)).toBe(200);
    });

    it('an access token alone is refused from the next request on; the login it came from lives on', async () => {
      const login = await loginWithCode(app, 'admin', ADMIN_PASSWORD, { scope: 'ADMIN' });
      const res = await revoke({
        token: String(login.body.access_token),
        token_type_hint: 'access_token',
        client_id: 'bims-docs',
      });
      expect(res.status).toBe(200);
      expect(await statusWith(login.body.access_token)).toBe(401);
      const refreshed = await postForm(app, '/oauth2/token', {
        grant_type: 'refresh_token',
        refresh_token: String(login.body.refresh_token),
        client_id: 'bims-docs',
      });
      expect(refreshed.status).toBe(200);
      expect(await statusWith((await refreshed.json()).access_token)).toBe(200);
    });

    it('client_credentials tokens: an account revokes its own with its password, a registered client with its secret', async () => {
      const accountToken = await clientCredentials(adminAuth);
      const otherAccountToken = await clientCredentials(adminAuth);
      expect(await statusWith(accountToken)).toBe(200);
      expect((await revoke({ token: accountToken }, { authorization: adminAuth })).status).toBe(200);
      expect(await statusWith(accountToken)).toBe(401);
      expect(await statusWith(otherAccountToken)).toBe(200);

      const { client, clientSecret } = await registerClient(booted.services.ctx, { name: 'payroll', role: 'ADMIN' });
      const clientAuth = basic(client.clientId, clientSecret);
      const clientToken = await clientCredentials(clientAuth);
      expect(await statusWith(clientToken)).toBe(200);
      // Another client may not revoke it, nor the account, nor a wrong secret.
      const foreign = await revoke({ token: clientToken }, { authorization: adminAuth });
      expect(foreign.status).toBe(400);
      expect((await foreign.json()).error).toBe('unauthorized_client');
      const wrong = await revoke({ token: clientToken }, { authorization: basic(client.clientId, 'not-the-secret') });
      expect(wrong.status).toBe(401);
      expect((await wrong.json()).error).toBe('invalid_client');
      expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic/);
      expect(await statusWith(clientToken)).toBe(200);
      expect((await revoke({ token: clientToken }, { authorization: clientAuth })).status).toBe(200);
      expect(await statusWith(clientToken)).toBe(401);
      // Revoking twice is fine.
      expect((await revoke({ token: clientToken }, { authorization: clientAuth })).status).toBe(200);
    });

    it('another client cannot revoke a login; an unknown token is a 200; bad requests are RFC 6749 errors', async () => {
      const login = await loginWithCode(app, 'admin', ADMIN_PASSWORD, { scope: 'ADMIN' });
      const foreign = await revoke({ token: String(login.body.refresh_token), client_id: 'bims-cli' });
      expect(foreign.status).toBe(400);
      expect((await foreign.json()).error).toBe('unauthorized_client');
      expect(await statusWith(login.body.access_token)).toBe(200);
      expect((await revoke({ token: 'no-such-token', client_id: 'bims-docs' })).status).toBe(200);
      expect((await revoke({ token: 'no-such-token', client_id: 'bims-docs', token_type_hint: 'other' })).status).toBe(
        200,
      );
      const noToken = await revoke({ client_id: 'bims-docs' });
      expect(noToken.status).toBe(400);
      expect((await noToken.json()).error).toBe('invalid_request');
      const noClient = await revoke({ token: String(login.body.refresh_token) });
      expect(noClient.status).toBe(401);
      expect((await noClient.json()).error).toBe('invalid_client');
      const badPassword = await revoke({ token: 'x' }, { authorization: basic('admin', 'wrong') });
      expect(badPassword.status).toBe(401);
      const media = await booted.app.request('/oauth2/revoke', {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'token=x',
      });
      expect(media.status).toBe(415);
      expect(await statusWith(login.body.access_token)).toBe(200);
    });
  });
}
