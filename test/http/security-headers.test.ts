// Security headers on every kind of answer (success, each error, 404s, OAuth, pages, assets, preflights),
// and CORS: closed by default, open to exactly the configured origins.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, basic, bootForTest } from '../support/databases.js';
import { send } from '../support/http.js';
import { authorizeUrl, pkcePair, postForm } from '../support/oauth-flow.js';

type Booted = Awaited<ReturnType<typeof bootForTest>>;
const boots: Booted[] = [];
afterAll(async () => {
  for (const b of boots) await b.close();
});
async function boot(env: Record<string, string> = {}) {
  const booted = await bootForTest('pglite', { BIMS_MAX_BODY_BYTES: '4096', ...env });
  boots.push(booted);
  return booted;
}

/** What every answer carries, whatever produced it. */
function expectSecurityHeaders(res: Response, what: string) {
  const h = res.headers;
  expect(h.get('x-content-type-options'), what).toBe('nosniff');
  expect(h.get('x-frame-options'), what).toBe('DENY');
  expect(h.get('referrer-policy'), what).toBe('no-referrer');
  expect(h.get('cross-origin-resource-policy'), what).toBe('same-origin');
  expect(h.get('strict-transport-security'), what).toMatch(/^max-age=\d{8,}$/);
  expect(h.get('content-security-policy'), what).toMatch(/frame-ancestors 'none'/);
  expect(h.get('x-request-id'), what).toBeTruthy();
}

describe('security headers', () => {
  let app: Booted['app'];
  const userAuth = basic('plain-user', 'plain-user-password');
  beforeAll(async () => {
    app = (await boot()).app;
    expect(
      (
        await send(app, 'POST', '/admin/accounts/create', {
          username: 'plain-user',
          password: 'plain-user-password',
          role: 'USER',
        })
      ).status,
    ).toBe(201);
  });

  it('are on every answer: successes, every error status, unknown routes, OAuth, the sign-in page and the docs', async () => {
    const { challenge } = await pkcePair();
    const answers: [string, Response, number][] = [
      ['health', await send(app, 'GET', '/health', undefined, null), 200],
      ['ready', await send(app, 'GET', '/ready', undefined, null), 200],
      ['management info', await send(app, 'GET', '/admin/management/info'), 200],
      [
        'create account',
        await send(app, 'POST', '/admin/accounts/create', { username: 'h2', password: 'h2-password', role: 'USER' }),
        201,
      ],
      ['validation', await send(app, 'POST', '/admin/accounts/create', { username: '' }), 400],
      ['malformed JSON', await send(app, 'POST', '/admin/accounts/create', '{"username":'), 400],
      ['no credentials', await send(app, 'GET', '/admin/management/info', undefined, null), 401],
      [
        'bad password',
        await send(app, 'GET', '/admin/management/info', undefined, basic('admin', 'wrong-password')),
        401,
      ],
      ['bad bearer', await send(app, 'GET', '/admin/management/info', undefined, 'Bearer not.a.token'), 401],
      ['forbidden', await send(app, 'GET', '/admin/management/info', undefined, userAuth), 403],
      ['unknown subject', await send(app, 'GET', '/admin/subjects/nobody-here'), 404],
      ['unknown route', await send(app, 'GET', '/no/such/route', undefined, null), 404],
      ['wrong method', await send(app, 'DELETE', '/health', undefined, null), 405],
      [
        'conflict',
        await send(app, 'POST', '/admin/accounts/create', { username: 'h2', password: 'h2-password', role: 'USER' }),
        409,
      ],
      [
        'too large',
        await send(app, 'POST', '/admin/accounts/create', {
          username: 'big',
          password: 'x'.repeat(8000),
          role: 'USER',
        }),
        413,
      ],
      [
        'media type',
        await send(app, 'POST', '/admin/accounts/create', 'username=x', adminAuth, { 'content-type': 'text/plain' }),
        415,
      ],
      ['not implemented or gateway down', await send(app, 'GET', '/admin/gateway/info'), -1],
      [
        'login',
        await send(app, 'POST', '/login', { username: 'plain-user', password: 'plain-user-password' }, null),
        200,
      ],
      [
        'token',
        await postForm(app, '/oauth2/token', { grant_type: 'client_credentials' }, { authorization: userAuth }),
        200,
      ],
      ['token error', await postForm(app, '/oauth2/token', { grant_type: 'password' }), 400],
      ['jwks', await app.request('/oauth2/jwks'), 200],
      ['sign-in page', await app.request(authorizeUrl({ challenge })), 200],
      ['docs page', await app.request('/docs'), 200],
      ['docs script', await app.request('/docs/assets/swagger-ui-bundle.js'), 200],
      ['docs OAuth redirect page', await app.request('/docs/assets/oauth2-redirect.html'), 200],
      ['OpenAPI document', await app.request('/admin/openapi.json'), 200],
    ];
    for (const [what, res, status] of answers) {
      if (status > 0) expect(res.status, what).toBe(status);
      expectSecurityHeaders(res, what);
    }
    // Answers about accounts, tokens and biometrics are never stored by browsers or proxies; only public,
    // unchanging material (JWKS, the docs assets) may be cached.
    const cacheable = new Set(['jwks', 'docs script', 'docs OAuth redirect page']);
    for (const [what, res] of answers) {
      if (cacheable.has(what)) expect(res.headers.get('cache-control'), what).toMatch(/^public, max-age=\d+$/);
      else expect(res.headers.get('cache-control'), what).toMatch(/no-store/);
    }
    // API answers (JSON, problems) may do nothing in a browser: no scripts, no frames, nothing loaded.
    for (const [what, res] of answers.filter(([, r]) => /json/.test(r.headers.get('content-type') ?? ''))) {
      expect(res.headers.get('content-security-policy'), what).toBe("default-src 'none'; frame-ancestors 'none'");
    }
  });

  it("give the docs page a policy of its own that runs its own scripts and nothing else's", async () => {
    const res = await app.request('/docs');
    const csp = res.headers.get('content-security-policy')!;
    const directives = Object.fromEntries(
      csp
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([name, ...values]) => [name, values]),
    );
    // Scripts: from our origin only (script-src absent falls back to default-src).
    expect(directives['script-src'] ?? directives['default-src']).toEqual(["'self'"]);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
    // ... and the page has no inline script the policy would block: every script is a file of ours.
    const html = await res.text();
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/src="\/docs\/assets\/[\w.-]+\.js"/);
      expect(body!.trim()).toBe('');
    }
    // The sign-in page runs no script at all and styles only with its nonce.
    const { challenge } = await pkcePair();
    const signIn = (await app.request(authorizeUrl({ challenge }))).headers.get('content-security-policy')!;
    expect(signIn).toMatch(/^default-src 'none'; style-src 'nonce-[\w-]+';/);
  });
});

describe('CORS', () => {
  const preflight = (app: Booted['app'], origin: string) =>
    app.request('/admin/subjects/create', {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
  const simple = (app: Booted['app'], origin: string) =>
    app.request('/admin/management/info', { headers: { origin, authorization: adminAuth } });

  it('is closed by default: no origin is allowed, by preflight or by a plain request', async () => {
    const { app } = await boot();
    const denied = await preflight(app, 'https://app.example');
    // Not a CORS answer: the path does not take OPTIONS, so it is a 405 naming what it takes.
    expect(denied.status).toBe(405);
    expect(denied.headers.get('allow')).toMatch(/\bPOST\b/);
    expect(denied.headers.get('access-control-allow-origin')).toBeNull();
    expect(denied.headers.get('access-control-allow-methods')).toBeNull();
    expectSecurityHeaders(denied, 'denied preflight');
    const plain = await simple(app, 'https://app.example');
    expect(plain.status).toBe(200);
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('allows exactly the configured origins, and tells caches that answers vary by origin', async () => {
    const { app } = await boot({ BIMS_CORS_ORIGINS: 'https://app.example, https://other.example' });
    for (const origin of ['https://app.example', 'https://other.example']) {
      const ok = await preflight(app, origin);
      expect(ok.status).toBe(204);
      expect(ok.headers.get('access-control-allow-origin')).toBe(origin);
      expect(ok.headers.get('access-control-allow-methods')).toMatch(/\bPOST\b/);
      expect(ok.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
      expect(ok.headers.get('access-control-allow-headers')).toMatch(/Content-Type/);
      expect(ok.headers.get('vary')).toMatch(/Origin/);
      expectSecurityHeaders(ok, 'allowed preflight');
      const plain = await simple(app, origin);
      expect(plain.headers.get('access-control-allow-origin')).toBe(origin);
      expect(plain.headers.get('access-control-expose-headers')).toMatch(/X-Request-Id/);
    }
    for (const origin of ['https://evil.example', 'https://app.example.evil.example', 'http://app.example', 'null']) {
      const denied = await preflight(app, origin);
      expect(denied.status, origin).toBe(405);
      expect(denied.headers.get('access-control-allow-origin'), origin).toBeNull();
      const plain = await simple(app, origin);
      expect(plain.headers.get('access-control-allow-origin'), origin).toBeNull();
      expect(plain.headers.get('vary'), origin).toMatch(/Origin/);
    }
    // Credentials are sent as an Authorization header, never as cookies the browser would attach itself.
    expect((await preflight(app, 'https://app.example')).headers.get('access-control-allow-credentials')).toBeNull();
  });

  it("allows any origin with '*', echoing it", async () => {
    const { app } = await boot({ BIMS_CORS_ORIGINS: '*' });
    const ok = await preflight(app, 'https://anywhere.example');
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://anywhere.example');
  });
});
