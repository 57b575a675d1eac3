import { SignJWT, decodeProtectedHeader, generateKeyPair } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuiltinClients, registerClient, removeClient } from '../../src/services/auth/oauth-clients.js';
import { ADMIN_PASSWORD, adminAuth, basic, bootForTest, serviceDialects } from '../support/databases.js';
import {
  DOCS_REDIRECT,
  authorizeUrl,
  cookieOf,
  hiddenFields,
  loginWithCode,
  pkcePair,
  postForm,
  signIn,
} from '../support/oauth-flow.js';

for (const dialect of serviceDialects) {
  describe(`OAuth 2.0 on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    /** Milliseconds the test clock runs ahead of the real one. */
    let skew = 0;
    const app = { request: (path: string, init?: RequestInit) => booted.app.request(path, init) };
    const token = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      postForm(app, '/oauth2/token', fields, headers);
    const bearer = (accessToken: unknown) => ({ authorization: `Bearer ${String(accessToken)}` });
    const getAccounts = (auth: Record<string, string>) => booted.app.request('/admin/accounts', { headers: auth });
    const createAccount = async (username: string, role: string) => {
      const res = await booted.app.request('/admin/accounts/create', {
        method: 'POST',
        headers: { authorization: adminAuth, 'content-type': 'application/json' },
        body: JSON.stringify({ username, password: `${username}-password`, role }),
      });
      expect(res.status).toBe(201);
      return (await res.json()) as { id: number };
    };
    const expectOAuthError = async (res: Response, status: number, error: string) => {
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const body = await res.json();
      expect(body).toMatchObject({ error, error_description: expect.any(String) });
      return body;
    };

    beforeAll(async () => {
      booted = await bootForTest(dialect, {}, { now: () => new Date(Date.now() + skew) });
      await createAccount('ursula', 'USER');
      await createAccount('judy', 'ADJUDICATOR');
    });
    afterAll(async () => {
      await booted?.close();
    });
    afterEach(async () => {
      skew = 0;
      // Every request here comes from the same (unknown) address; keep one test's failures out of the next.
      await booted.services.auth.throttle.forget('unknown');
    });

    it('seeds the built-in public clients idempotently', async () => {
      await ensureBuiltinClients(booted.services.ctx);
      const rows = await booted.services.ctx.db.selectFrom('oauth_clients').selectAll().orderBy('client_id').execute();
      expect(rows.map((r) => [r.client_id, r.secret_hash])).toEqual([
        ['bims-cli', null],
        ['bims-docs', null],
      ]);
      expect(rows[1]!.redirect_uris).toContain(DOCS_REDIRECT);
      expect(rows[0]!.redirect_uris).toContain('http://127.0.0.1:*/*');
    });

    it('runs the authorization code flow with PKCE and the token works on /admin', async () => {
      const { challenge, verifier } = await pkcePair();
      const page = await booted.app.request(authorizeUrl({ challenge, scope: 'ADMIN' }));
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      const csp = page.headers.get('content-security-policy')!;
      expect(csp).toMatch(/default-src 'none'/);
      expect(csp).toMatch(/form-action 'self' http:\/\/127\.0\.0\.1:8080/);
      expect(page.headers.get('set-cookie')).toMatch(/HttpOnly/i);
      expect(page.headers.get('set-cookie')).toMatch(/SameSite=Strict/i);
      const html = await page.text();
      expect(html).not.toMatch(/<script|src="http|href="http/);
      const fields = hiddenFields(html);
      expect(fields.csrf).toBeTruthy();

      const post = await postForm(
        app,
        '/oauth2/authorize',
        { ...fields, username: 'admin', password: ADMIN_PASSWORD, action: 'login' },
        { cookie: cookieOf(page) },
      );
      expect(post.status).toBe(302);
      const location = new URL(post.headers.get('location')!);
      expect(`${location.origin}${location.pathname}`).toBe(DOCS_REDIRECT);
      expect(location.searchParams.get('state')).toBe('state-123');
      expect(location.searchParams.get('iss')).toBe('http://127.0.0.1:8080');
      const code = location.searchParams.get('code')!;

      const res = await token({
        grant_type: 'authorization_code',
        code,
        redirect_uri: DOCS_REDIRECT,
        code_verifier: verifier,
        client_id: 'bims-docs',
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('pragma')).toBe('no-cache');
      const body = await res.json();
      expect(body).toMatchObject({
        token_type: 'Bearer',
        expires_in: 900,
        scope: 'ADMIN',
        refresh_token: expect.any(String),
      });
      expect((await getAccounts(bearer(body.access_token))).status).toBe(200);

      // Codes and refresh tokens are stored only as hashes.
      const db = booted.services.ctx.db;
      const stored = JSON.stringify([
        await db.selectFrom('oauth_codes').selectAll().execute(),
        await db.selectFrom('refresh_tokens').selectAll().execute(),
      ]);
      expect(stored).not.toContain(code);
      expect(stored).not.toContain(body.refresh_token);
    });

    it('gives a USER account a token that /user accepts and /admin and /adjudicator refuse with 403', async () => {
      const { body } = await loginWithCode(app, 'ursula', 'ursula-password');
      expect(body.scope).toBe('USER');
      const res = await getAccounts(bearer(body.access_token));
      expect(res.status).toBe(403);
      expect((await booted.app.request('/user/management/info', { headers: bearer(body.access_token) })).status).toBe(
        200,
      );
      expect(
        (await booted.app.request('/adjudicator/management/info', { headers: bearer(body.access_token) })).status,
      ).toBe(403);
    });

    it('shows an error page, never a redirect, for an unknown client or an unregistered redirect URI', async () => {
      const { challenge } = await pkcePair();
      for (const url of [
        authorizeUrl({ challenge, clientId: 'nobody' }),
        authorizeUrl({ challenge, redirectUri: 'https://evil.example/cb' }),
        authorizeUrl({ challenge, redirectUri: `${DOCS_REDIRECT}?x=1` }),
        authorizeUrl({ challenge, clientId: 'bims-cli', redirectUri: 'http://127.1:5000/cb' }),
        authorizeUrl({ challenge, clientId: 'bims-cli', redirectUri: 'http://evil.example:5000/cb' }),
        '/oauth2/authorize?response_type=code',
      ]) {
        const res = await booted.app.request(url);
        expect(res.status, url).toBe(400);
        expect(res.headers.get('location')).toBeNull();
        expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      }
    });

    it('accepts any loopback port and path for the native CLI client', async () => {
      const { challenge } = await pkcePair();
      for (const redirectUri of ['http://127.0.0.1:53682/callback', 'http://localhost:1234/', 'http://[::1]:8000/x']) {
        expect(
          (await booted.app.request(authorizeUrl({ challenge, clientId: 'bims-cli', redirectUri }))).status,
          redirectUri,
        ).toBe(200);
      }
      const { body } = await loginWithCode(app, 'admin', ADMIN_PASSWORD, {
        clientId: 'bims-cli',
        redirectUri: 'http://127.0.0.1:49152/done',
      });
      expect(body.scope).toBe('ADMIN');
    });

    it('redirects with error= for requests a valid client can be told about', async () => {
      const { challenge } = await pkcePair();
      const cases: [string, string][] = [
        [authorizeUrl({ challenge }).replace('response_type=code', 'response_type=token'), 'unsupported_response_type'],
        [authorizeUrl({ challenge }).replace(/&code_challenge=[^&]*/, ''), 'invalid_request'],
        [
          authorizeUrl({ challenge }).replace('code_challenge_method=S256', 'code_challenge_method=plain'),
          'invalid_request',
        ],
        [authorizeUrl({ challenge: 'too-short' }), 'invalid_request'],
        [authorizeUrl({ challenge, scope: 'ROOT' }), 'invalid_scope'],
        [`${authorizeUrl({ challenge })}&state=again`, 'invalid_request'],
      ];
      for (const [url, error] of cases) {
        const res = await booted.app.request(url);
        expect(res.status, url).toBe(302);
        const location = new URL(res.headers.get('location')!);
        expect(`${location.origin}${location.pathname}`).toBe(DOCS_REDIRECT);
        expect(location.searchParams.get('error'), url).toBe(error);
        expect(location.searchParams.get('state')).toBe('state-123');
      }
    });

    it('re-shows the form with 401 for a wrong password and 403 without the CSRF cookie', async () => {
      const { challenge } = await pkcePair();
      const wrong = await signIn(app, 'admin', 'not-the-password', { challenge });
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get('location')).toBeNull();
      const html = await wrong.text();
      expect(html).toContain('Wrong user name or password');
      expect(hiddenFields(html).csrf).toBeTruthy();

      const page = await booted.app.request(authorizeUrl({ challenge }));
      const fields = hiddenFields(await page.text());
      const login = { ...fields, username: 'admin', password: ADMIN_PASSWORD, action: 'login' };
      const noCookie = await postForm(app, '/oauth2/authorize', login);
      expect(noCookie.status).toBe(403);
      const otherCookie = await postForm(app, '/oauth2/authorize', login, {
        cookie: 'bims-authorize=AAAAAAAAAAAAAAAAAAAAAA',
      });
      expect(otherCookie.status).toBe(403);
      // A genuine token cannot be replayed for a different request (here: another state).
      const tampered = await postForm(
        app,
        '/oauth2/authorize',
        { ...login, state: 'other' },
        { cookie: cookieOf(page) },
      );
      expect(tampered.status).toBe(403);
      const cancel = await postForm(
        app,
        '/oauth2/authorize',
        { ...fields, action: 'cancel' },
        { cookie: cookieOf(page) },
      );
      expect(cancel.status).toBe(302);
      expect(new URL(cancel.headers.get('location')!).searchParams.get('error')).toBe('access_denied');
    });

    it('refuses a wrong PKCE verifier without burning the code', async () => {
      const { challenge, verifier } = await pkcePair();
      const res = await signIn(app, 'admin', ADMIN_PASSWORD, { challenge });
      const code = new URL(res.headers.get('location')!).searchParams.get('code')!;
      const base = { grant_type: 'authorization_code', code, redirect_uri: DOCS_REDIRECT, client_id: 'bims-docs' };
      await expectOAuthError(
        await token({ ...base, code_verifier: (await pkcePair()).verifier }),
        400,
        'invalid_grant',
      );
      await expectOAuthError(
        await token({ ...base, code_verifier: verifier, redirect_uri: `${DOCS_REDIRECT}?x` }),
        400,
        'invalid_grant',
      );
      await expectOAuthError(
        await token({ ...base, code_verifier: verifier, client_id: 'bims-cli' }),
        400,
        'invalid_grant',
      );
      expect((await token({ ...base, code_verifier: verifier })).status).toBe(200);
    });

    it('refuses a reused code and revokes the tokens issued from it', async () => {
      const first = await loginWithCode(app, 'admin', ADMIN_PASSWORD);
      expect(first.res.status).toBe(200);
      const again = await token({
        grant_type: 'authorization_code',
        code: first.code,
        redirect_uri: DOCS_REDIRECT,
        code_verifier: first.verifier,
        client_id: 'bims-docs',
      });
      await expectOAuthError(again, 400, 'invalid_grant');
      expect((await getAccounts(bearer(first.body.access_token))).status).toBe(401);
      await expectOAuthError(
        await token({
          grant_type: 'refresh_token',
          refresh_token: String(first.body.refresh_token),
          client_id: 'bims-docs',
        }),
        400,
        'invalid_grant',
      );
    });

    it('lets a code expire after 60 seconds', async () => {
      const { challenge, verifier } = await pkcePair();
      const res = await signIn(app, 'admin', ADMIN_PASSWORD, { challenge });
      const code = new URL(res.headers.get('location')!).searchParams.get('code')!;
      skew = 61_000;
      await expectOAuthError(
        await token({
          grant_type: 'authorization_code',
          code,
          redirect_uri: DOCS_REDIRECT,
          code_verifier: verifier,
          client_id: 'bims-docs',
        }),
        400,
        'invalid_grant',
      );
    });

    it('rotates refresh tokens and revokes the family when a replaced one is reused', async () => {
      const { body: first } = await loginWithCode(app, 'admin', ADMIN_PASSWORD);
      const refresh = (refresh_token: unknown, extra: Record<string, string> = {}) =>
        token({ grant_type: 'refresh_token', refresh_token: String(refresh_token), client_id: 'bims-docs', ...extra });
      const r2 = await refresh(first.refresh_token);
      expect(r2.status).toBe(200);
      const second = await r2.json();
      expect(second.refresh_token).not.toBe(first.refresh_token);
      expect((await getAccounts(bearer(second.access_token))).status).toBe(200);
      // A public client may leave out client_id: the token names its client.
      const r3 = await token({ grant_type: 'refresh_token', refresh_token: String(second.refresh_token) });
      expect(r3.status).toBe(200);
      const third = await r3.json();

      // Replaying the first token: refused, and everything of the family dies, the newest token included.
      await expectOAuthError(await refresh(first.refresh_token), 400, 'invalid_grant');
      await expectOAuthError(await refresh(third.refresh_token), 400, 'invalid_grant');
      expect((await getAccounts(bearer(third.access_token))).status).toBe(401);
      const rows = await booted.services.ctx.db
        .selectFrom('refresh_tokens')
        .select(['revoked_at'])
        .where(
          'family_id',
          '=',
          (
            await booted.services.ctx.db
              .selectFrom('refresh_tokens')
              .select('family_id')
              .orderBy('created_at', 'desc')
              .limit(1)
              .executeTakeFirstOrThrow()
          ).family_id,
        )
        .execute();
      expect(rows.length).toBeGreaterThanOrEqual(3);
      expect(rows.every((r) => r.revoked_at !== null)).toBe(true);
      await expectOAuthError(await refresh('never-issued'), 400, 'invalid_grant');
    });

    it('refuses an expired refresh token', async () => {
      const { body } = await loginWithCode(app, 'admin', ADMIN_PASSWORD);
      skew = (booted.config.BIMS_REFRESH_TOKEN_SECONDS + 1) * 1000;
      await expectOAuthError(
        await token({ grant_type: 'refresh_token', refresh_token: String(body.refresh_token), client_id: 'bims-docs' }),
        400,
        'invalid_grant',
      );
    });

    it('issues client_credentials tokens to a registered client, by Basic or form fields', async () => {
      const { client, clientSecret } = await registerClient(booted.services.ctx, {
        name: 'integration',
        role: 'ADJUDICATOR',
      });
      const viaBasic = await token(
        { grant_type: 'client_credentials' },
        { authorization: basic(client.clientId, clientSecret) },
      );
      expect(viaBasic.status).toBe(200);
      const body = await viaBasic.json();
      expect(body).toMatchObject({ token_type: 'Bearer', scope: 'ADJUDICATOR' });
      expect(body.refresh_token).toBeUndefined();
      const payload = JSON.parse(Buffer.from(String(body.access_token).split('.')[1]!, 'base64url').toString());
      expect(payload).toMatchObject({
        sub: `client:${client.clientId}`,
        client_id: client.clientId,
        scope: 'ADJUDICATOR',
      });
      expect((await getAccounts(bearer(body.access_token))).status).toBe(403);

      const viaForm = await token({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: clientSecret,
        scope: 'USER',
      });
      expect(viaForm.status).toBe(200);
      expect((await viaForm.json()).scope).toBe('USER');

      const badBasic = await token(
        { grant_type: 'client_credentials' },
        { authorization: basic(client.clientId, 'wrong') },
      );
      await expectOAuthError(badBasic, 401, 'invalid_client');
      expect(badBasic.headers.get('www-authenticate')).toMatch(/^Basic /);
      const badForm = await token({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: 'wrong',
      });
      await expectOAuthError(badForm, 401, 'invalid_client');
      expect(badForm.headers.get('www-authenticate')).toBeNull();
      await expectOAuthError(await token({ grant_type: 'client_credentials' }), 401, 'invalid_client');
      await expectOAuthError(
        await token({ grant_type: 'client_credentials', client_id: 'bims-docs', client_secret: 'x' }),
        400,
        'unauthorized_client',
      );
      // Stored hashed.
      const row = await booted.services.ctx.db
        .selectFrom('oauth_clients')
        .selectAll()
        .where('client_id', '=', client.clientId)
        .executeTakeFirstOrThrow();
      expect(row.secret_hash).not.toContain(clientSecret);
    });

    it('accepts account credentials as client credentials', async () => {
      const viaBasic = await token(
        { grant_type: 'client_credentials' },
        { authorization: basic('admin', ADMIN_PASSWORD) },
      );
      expect(viaBasic.status).toBe(200);
      const body = await viaBasic.json();
      expect(body.scope).toBe('ADMIN');
      expect((await getAccounts(bearer(body.access_token))).status).toBe(200);
      const viaForm = await token({
        grant_type: 'client_credentials',
        client_id: 'judy',
        client_secret: 'judy-password',
      });
      expect((await viaForm.json()).scope).toBe('ADJUDICATOR');
      await expectOAuthError(
        await token({ grant_type: 'client_credentials', client_id: 'judy', client_secret: 'nope' }),
        401,
        'invalid_client',
      );
    });

    it('reads account passwords in Basic both form-encoded (RFC 6749 2.3.1) and as sent by curl -u', async () => {
      const password = 'p+ss%41word 1';
      const res = await booted.app.request('/admin/accounts/create', {
        method: 'POST',
        headers: { authorization: adminAuth, 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'plus', password, role: 'USER' }),
      });
      expect(res.status).toBe(201);
      const encoded = basic('plus', encodeURIComponent(password));
      expect((await token({ grant_type: 'client_credentials' }, { authorization: encoded })).status).toBe(200);
      expect(
        (await token({ grant_type: 'client_credentials' }, { authorization: basic('plus', password) })).status,
      ).toBe(200);
      expect(
        (await token({ grant_type: 'client_credentials', client_id: 'plus', client_secret: password })).status,
      ).toBe(200);
    });

    it('ends every token issued through a client when the client is removed', async () => {
      const redirectUri = 'https://gone.example/cb';
      const { client, clientSecret } = await registerClient(booted.services.ctx, {
        name: 'Short-lived',
        role: 'ADMIN',
        redirectUris: [redirectUri],
      });
      const own = await (
        await token({ grant_type: 'client_credentials' }, { authorization: basic(client.clientId, clientSecret) })
      ).json();
      const { challenge, verifier } = await pkcePair();
      const signedIn = await signIn(app, 'admin', ADMIN_PASSWORD, {
        challenge,
        clientId: client.clientId,
        redirectUri,
      });
      const code = new URL(signedIn.headers.get('location')!).searchParams.get('code')!;
      const user = await (
        await token(
          { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier },
          { authorization: basic(client.clientId, clientSecret) },
        )
      ).json();
      expect((await getAccounts(bearer(own.access_token))).status).toBe(200);
      expect((await getAccounts(bearer(user.access_token))).status).toBe(200);
      await removeClient(booted.services.ctx, client.clientId);
      expect((await getAccounts(bearer(own.access_token))).status).toBe(401);
      expect((await getAccounts(bearer(user.access_token))).status).toBe(401);
      await expectOAuthError(
        await token(
          { grant_type: 'refresh_token', refresh_token: user.refresh_token },
          { authorization: basic(client.clientId, clientSecret) },
        ),
        401,
        'invalid_client',
      );
      await expect(removeClient(booted.services.ctx, 'bims-docs')).rejects.toThrow(/built-in/);
    });

    it('throttles repeated failures with 429 and Retry-After', async () => {
      let last: Response | undefined;
      for (let i = 0; i < 6; i++)
        last = await token({ grant_type: 'client_credentials', client_id: 'ursula', client_secret: `guess-${i}` });
      await expectOAuthError(last!, 429, 'invalid_client');
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    });

    it('narrows scopes and refuses to widen them', async () => {
      const { body } = await loginWithCode(app, 'admin', ADMIN_PASSWORD, { scope: 'ADJUDICATOR' });
      expect(body.scope).toBe('ADJUDICATOR');
      expect((await getAccounts(bearer(body.access_token))).status).toBe(403);
      // A refresh may narrow further, but not go beyond what the login granted; a refusal keeps the token usable.
      const refresh = (scope: string) =>
        token({
          grant_type: 'refresh_token',
          refresh_token: String(body.refresh_token),
          client_id: 'bims-docs',
          scope,
        });
      await expectOAuthError(await refresh('ADMIN'), 400, 'invalid_scope');
      const narrowed = await refresh('USER');
      expect(narrowed.status).toBe(200);
      expect((await narrowed.json()).scope).toBe('USER');

      await expectOAuthError(
        await token({
          grant_type: 'client_credentials',
          client_id: 'ursula',
          client_secret: 'ursula-password',
          scope: 'ADMIN',
        }),
        400,
        'invalid_scope',
      );
      await expectOAuthError(
        await token({
          grant_type: 'client_credentials',
          client_id: 'ursula',
          client_secret: 'ursula-password',
          scope: 'EVERYTHING',
        }),
        400,
        'invalid_scope',
      );
      const admin = await token({
        grant_type: 'client_credentials',
        client_id: 'admin',
        client_secret: ADMIN_PASSWORD,
        scope: 'USER',
      });
      expect((await admin.json()).scope).toBe('USER');

      // The sign-in form refuses an account that does not hold the scope asked for.
      const { challenge } = await pkcePair();
      const denied = await signIn(app, 'ursula', 'ursula-password', { challenge, scope: 'ADMIN' });
      expect(denied.status).toBe(403);
      expect(denied.headers.get('location')).toBeNull();
    });

    it('answers malformed requests with RFC 6749 errors, never a 500', async () => {
      await expectOAuthError(
        await token({ grant_type: 'password', username: 'admin', password: ADMIN_PASSWORD }),
        400,
        'unsupported_grant_type',
      );
      await expectOAuthError(await token({}), 400, 'invalid_request');
      await expectOAuthError(
        await token({ grant_type: 'authorization_code', client_id: 'bims-docs' }),
        400,
        'invalid_request',
      );
      const duplicated = await booted.app.request('/oauth2/token', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials&grant_type=refresh_token',
      });
      await expectOAuthError(duplicated, 400, 'invalid_request');
      const plain = await booted.app.request('/oauth2/token', {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'grant_type=client_credentials',
      });
      await expectOAuthError(plain, 415, 'invalid_request');
      for (const [type, body] of [
        ['application/json', '{"grant_type": '],
        ['application/json', '{"grant_type": 7}'],
        ['application/json', '[]'],
        ['application/x-www-form-urlencoded', '%%%=%'],
      ]) {
        const res = await booted.app.request('/oauth2/token', {
          method: 'POST',
          headers: { 'content-type': type! },
          body,
        });
        expect(res.status, `${type} ${body}`).toBeLessThan(500);
        expect(res.status).toBe(400);
      }
      const badBasic = await token({ grant_type: 'client_credentials' }, { authorization: 'Basic !!!' });
      await expectOAuthError(badBasic, 401, 'invalid_client');
      expect(badBasic.headers.get('www-authenticate')).toMatch(/^Basic /);
      await expectOAuthError(
        await token({ grant_type: 'refresh_token', refresh_token: 'x'.repeat(5000) }),
        400,
        'invalid_request',
      );

      const json = await booted.app.request('/oauth2/token', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id: 'admin', client_secret: ADMIN_PASSWORD }),
      });
      expect(json.status).toBe(200);
      const form = await booted.app.request('/oauth2/authorize', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(form.status).toBe(400);
    });

    it('rejects an expired access token', async () => {
      const { body } = await loginWithCode(app, 'admin', ADMIN_PASSWORD);
      skew = (booted.config.BIMS_ACCESS_TOKEN_SECONDS + 60) * 1000;
      const res = await getAccounts(bearer(body.access_token));
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    });

    it('lists the signing key in the JWKS and rejects tokens of a retired or a foreign key', async () => {
      const body = await (
        await token({ grant_type: 'client_credentials', client_id: 'admin', client_secret: ADMIN_PASSWORD })
      ).json();
      const { kid } = decodeProtectedHeader(String(body.access_token));
      const jwks = await (await booted.app.request('/oauth2/jwks')).json();
      expect(jwks.keys.map((k: { kid: string }) => k.kid)).toContain(kid);
      expect(jwks.keys.every((k: Record<string, unknown>) => k.d === undefined)).toBe(true);

      // A key of our own shape and kid, but not ours.
      const foreign = await generateKeyPair('ES256');
      const forged = await new SignJWT({ sub: 'account:1', scope: 'ADMIN', client_id: 'bims-docs' })
        .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
        .setIssuer('http://127.0.0.1:8080')
        .setAudience('bims')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(foreign.privateKey);
      expect((await getAccounts(bearer(forged))).status).toBe(401);
      const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', kid })).toString('base64url')}.${String(body.access_token).split('.')[1]}.`;
      expect((await getAccounts(bearer(unsigned))).status).toBe(401);

      expect((await getAccounts(bearer(body.access_token))).status).toBe(200);
      await booted.services.auth.keys.retire(kid!);
      expect((await getAccounts(bearer(body.access_token))).status).toBe(401);
      const after = await (await booted.app.request('/oauth2/jwks')).json();
      expect(after.keys.map((k: { kid: string }) => k.kid)).not.toContain(kid);
      const fresh = await (
        await token({ grant_type: 'client_credentials', client_id: 'admin', client_secret: ADMIN_PASSWORD })
      ).json();
      expect((await getAccounts(bearer(fresh.access_token))).status).toBe(200);
    });

    it('ends the tokens of an account when it is disabled', async () => {
      const account = await createAccount('temp-admin', 'ADMIN');
      const { body } = await loginWithCode(app, 'temp-admin', 'temp-admin-password');
      expect((await getAccounts(bearer(body.access_token))).status).toBe(200);
      const change = await booted.app.request('/admin/accounts/change', {
        method: 'POST',
        headers: { authorization: adminAuth, 'content-type': 'application/json' },
        body: JSON.stringify({ id: account.id, enabled: false }),
      });
      expect(change.status).toBe(200);
      expect((await getAccounts(bearer(body.access_token))).status).toBe(401);
      await expectOAuthError(
        await token({ grant_type: 'refresh_token', refresh_token: String(body.refresh_token), client_id: 'bims-docs' }),
        400,
        'invalid_grant',
      );
    });

    it('makes a confidential client authenticate in the code flow', async () => {
      const redirectUri = 'https://app.example/callback';
      const { client, clientSecret } = await registerClient(booted.services.ctx, {
        name: 'Web app',
        role: 'USER',
        redirectUris: [redirectUri],
      });
      const { challenge, verifier } = await pkcePair();
      const res = await signIn(app, 'admin', ADMIN_PASSWORD, { challenge, clientId: client.clientId, redirectUri });
      expect(res.status).toBe(302);
      const code = new URL(res.headers.get('location')!).searchParams.get('code')!;
      const exchange = { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier };
      await expectOAuthError(await token({ ...exchange, client_id: client.clientId }), 401, 'invalid_client');
      const ok = await token(exchange, { authorization: basic(client.clientId, clientSecret) });
      expect(ok.status).toBe(200);
      // The client's role caps what the admin's login can give it.
      expect((await ok.json()).scope).toBe('USER');
    });
  });
}
