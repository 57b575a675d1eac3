import fc from 'fast-check';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, adminAuth, bootForTest } from '../support/databases.js';
import { DOCS_REDIRECT } from '../support/oauth-flow.js';

/**
 * The OAuth endpoints outside the surface documents keep the contract docs/oauth.md states: requests generated
 * with fast-check, every answer one of the statuses its table lists for the endpoint, none a 5xx. The table is
 * read from the page itself, so the page and the server cannot drift apart unnoticed.
 */

type Booted = Awaited<ReturnType<typeof bootForTest>>;
let booted: Booted;
/** Generated requests per endpoint: enough to cross the branches of the authorize checks a few times. */
const RUNS = 40;

beforeAll(async () => {
  booted = await bootForTest('pglite');
});
afterAll(async () => {
  await booted?.close();
});

/** `| METHOD | /path | 200, 302 |` rows of docs/oauth.md. */
async function documentedAnswers(): Promise<Map<string, string[]>> {
  const text = await readFile(new URL('../../docs/oauth.md', import.meta.url), 'utf8');
  const rows = new Map<string, string[]>();
  for (const m of text.matchAll(/^\| (GET|POST) \| (\S+) \| ([\d, ]+) \|$/gm))
    rows.set(
      `${m[1]} ${m[2]}`,
      m[3]!.split(',').map((s) => s.trim()),
    );
  return rows;
}

// A valid PKCE challenge is 43 base64url characters; the rest are near misses and junk.
const challenge = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_-]{43}$/),
  fc.string({ maxLength: 50 }),
  fc.constant(undefined),
);
const anyParams = fc.record(
  {
    response_type: fc.constantFrom('code', 'token', '', 'CODE'),
    client_id: fc.constantFrom('bims-docs', 'bims-cli', 'nobody', ''),
    redirect_uri: fc.constantFrom(
      DOCS_REDIRECT,
      'http://127.0.0.1:53682/cb',
      'https://evil.example/cb',
      `${DOCS_REDIRECT}?x=1`,
      'not a uri',
      '',
    ),
    code_challenge: challenge,
    code_challenge_method: fc.constantFrom('S256', 'plain', 'x', undefined),
    state: fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
    scope: fc.constantFrom('ADMIN', 'ADJUDICATOR', 'USER', 'ADMIN USER', 'root', undefined),
  },
  { requiredKeys: [] },
);
/** A request the server accepts, so that the form, the sign-in and its outcomes are reached as often as refusals. */
const acceptedParams = fc.record({
  response_type: fc.constant('code'),
  client_id: fc.constant('bims-docs'),
  redirect_uri: fc.constant(DOCS_REDIRECT),
  code_challenge: fc.stringMatching(/^[A-Za-z0-9_-]{43}$/),
  code_challenge_method: fc.constant('S256'),
  state: fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
  scope: fc.constantFrom('ADMIN', 'USER', undefined),
});
const authorizeParams = fc.oneof(anyParams, acceptedParams);
const formExtras = fc.record(
  {
    username: fc.constantFrom('admin', 'nobody', '', 'x'.repeat(80)),
    password: fc.constantFrom(ADMIN_PASSWORD, 'wrong-password', ''),
    action: fc.constantFrom('login', 'cancel', 'other'),
    csrf: fc.option(fc.string({ maxLength: 60 }), { nil: undefined }),
  },
  { requiredKeys: [] },
);
const mediaType = fc.constantFrom(
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=utf-8',
  'application/json',
  'text/plain',
  undefined,
);

function query(values: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) if (value !== undefined) q.set(key, value);
  return q.toString();
}

describe('OAuth endpoints outside the surface documents (docs/oauth.md)', () => {
  it('docs/oauth.md lists each endpoint with its answers', async () => {
    expect([...(await documentedAnswers()).keys()].sort()).toEqual([
      'GET /.well-known/oauth-authorization-server',
      'GET /oauth2/authorize',
      'GET /oauth2/jwks',
      'POST /oauth2/authorize',
      'POST /oauth2/revoke',
    ]);
  });

  it('a wrong method on any of them is a 405 problem with Allow, as the page says', async () => {
    for (const key of (await documentedAnswers()).keys()) {
      const path = key.split(' ')[1]!;
      const res = await booted.app.request(path, { method: 'DELETE' });
      expect(res.status, path).toBe(405);
      expect(res.headers.get('content-type'), path).toMatch(/^application\/problem\+json/);
      expect(res.headers.get('allow'), path).toMatch(/GET|POST/);
    }
  });

  it('generated requests get only the answers the page lists, never a 5xx', async () => {
    const documented = await documentedAnswers();
    const seen = new Map<string, Set<number>>();
    const breaches: string[] = [];
    const send = async (key: string, url: string, init?: RequestInit) => {
      const res = await booted.app.request(url, init);
      await res.body?.cancel();
      if (!documented.get(key)!.includes(String(res.status)))
        breaches.push(`${key} ${url.slice(0, 160)}: ${res.status}`);
      seen.set(key, (seen.get(key) ?? new Set()).add(res.status));
    };
    for (const path of ['/.well-known/oauth-authorization-server', '/oauth2/jwks']) {
      await send(`GET ${path}`, path);
      await send(`GET ${path}`, `${path}?${query({ x: 'y' })}`);
    }
    for (const params of fc.sample(authorizeParams, { numRuns: RUNS, seed: 17 })) {
      await send('GET /oauth2/authorize', `/oauth2/authorize?${query(params)}`);
    }
    // Forms are posted without the page's cookie, or with the token of a page opened just before.
    const posts = fc.sample(fc.tuple(authorizeParams, formExtras, mediaType, fc.boolean()), {
      numRuns: RUNS,
      seed: 17,
    });
    for (const [params, extras, type, fromPage] of posts) {
      const headers: Record<string, string> = type ? { 'content-type': type } : {};
      const fields: Record<string, string | undefined> = { ...params, ...extras };
      if (fromPage) {
        const page = await booted.app.request(`/oauth2/authorize?${query(params)}`);
        const html = await page.text();
        const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
        const cookie = page.headers.get('set-cookie')?.split(';')[0];
        if (csrf) fields.csrf = csrf;
        if (cookie) headers.cookie = cookie;
      }
      await send('POST /oauth2/authorize', '/oauth2/authorize', { method: 'POST', headers, body: query(fields) });
      // Keep the throttle from answering every later sign-in 429: each request comes from the same address.
      await booted.services.auth.throttle.forget('unknown');
    }
    // Revocation requests: known and unknown clients, with and without secrets, tokens real and not, any media type.
    const login = await booted.app.request('/oauth2/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: adminAuth },
      body: 'grant_type=client_credentials',
    });
    const realToken = String((await login.json()).access_token);
    const revocations = fc.sample(
      fc.tuple(
        fc.record(
          {
            token: fc.constantFrom(realToken, 'not-a-token', '', 'eyJhbGciOiJub25lIn0.e30.'),
            token_type_hint: fc.constantFrom('access_token', 'refresh_token', 'other', ''),
            client_id: fc.constantFrom('bims-docs', 'bims-cli', 'nobody', 'admin', ''),
            client_secret: fc.constantFrom('x', ''),
          },
          { requiredKeys: [] },
        ),
        fc.constantFrom<string | undefined>(
          'application/x-www-form-urlencoded',
          'application/json',
          'text/plain',
          undefined,
        ),
        fc.boolean(),
      ),
      { numRuns: RUNS, seed: 17 },
    );
    for (const [fields, type, withAdmin] of revocations) {
      const headers: Record<string, string> = type ? { 'content-type': type } : {};
      if (withAdmin) headers.authorization = adminAuth;
      const body = type === 'application/json' ? JSON.stringify(fields) : query(fields);
      await send('POST /oauth2/revoke', '/oauth2/revoke', { method: 'POST', headers, body });
      await booted.services.auth.throttle.forget('unknown');
    }
    expect(breaches).toEqual([]);
    expect([...seen.get('POST /oauth2/revoke')!]).toEqual(expect.arrayContaining([200, 400, 401, 415]));
    // The generation reaches the interesting answers, not only the refusals.
    expect([...seen.get('GET /oauth2/authorize')!].sort()).toEqual([200, 302, 400]);
    expect([...seen.get('POST /oauth2/authorize')!]).toEqual(expect.arrayContaining([302, 400, 401, 403]));
  }, 300_000);
});
