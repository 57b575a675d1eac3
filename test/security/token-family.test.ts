import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, adminAuth, bootForTest, serviceDialects } from '../support/databases.js';
import { NO_SIDECAR_ENV } from '../support/external-ops.js';
import { DOCS_REDIRECT, loginWithCode, pkcePair, postForm, signIn } from '../support/oauth-flow.js';
import { boot, type Booted } from '../../src/runtime/bootstrap.js';
import { createLogger } from '../../src/logger.js';
import { allRoutes } from '../support/routes.js';
import { concretePath } from '../support/seed.js';

/**
 * A refresh token presented again after it was rotated means two parties hold the login: the whole family
 * is revoked, and the access tokens already issued from it must stop working at once, on every route, not
 * only on the token endpoint. A login of its own (another family) must be unaffected.
 */

// Open operations read no credentials, so a revoked token proves nothing there.
const guarded = allRoutes().filter((r) => !r.open);

for (const dialect of serviceDialects) {
  describe(`refresh token reuse on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    const app = { request: (path: string, init?: RequestInit) => booted.app.request(path, init) };

    beforeAll(async () => {
      booted = await bootForTest(dialect, NO_SIDECAR_ENV);
    });
    afterAll(async () => {
      await booted?.close();
    });

    /** The status of every guarded route for a Bearer token, grouped by status. */
    async function statusesWith(accessToken: unknown): Promise<Map<number, string[]>> {
      const out = new Map<number, string[]>();
      for (const route of guarded) {
        const res = await booted.app.fetch(
          new Request(`http://127.0.0.1:8080${concretePath(route.path)}`, {
            method: route.spec.method.toUpperCase(),
            headers: { authorization: `Bearer ${String(accessToken)}` },
          }),
        );
        if (res.status === 401 && !/error="invalid_token"/.test(res.headers.get('www-authenticate') ?? ''))
          out.set(-1, [...(out.get(-1) ?? []), route.path]);
        out.set(res.status, [...(out.get(res.status) ?? []), `${route.spec.method.toUpperCase()} ${route.path}`]);
      }
      return out;
    }
    const refresh = (token: unknown) =>
      postForm(app, '/oauth2/token', {
        grant_type: 'refresh_token',
        refresh_token: String(token),
        client_id: 'bims-docs',
      });

    it('revokes every access token of the family on every route, and only that family', async () => {
      const first = (await loginWithCode(app, 'admin', ADMIN_PASSWORD)).body;
      const other = (await loginWithCode(app, 'admin', ADMIN_PASSWORD)).body;
      const rotated = await refresh(first.refresh_token);
      expect(rotated.status).toBe(200);
      const second = await rotated.json();

      // Before the reuse, both access tokens of the family pass authorisation everywhere.
      for (const token of [first.access_token, second.access_token]) {
        const before = await statusesWith(token);
        expect(before.get(401) ?? [], 'refused before the reuse').toEqual([]);
        expect(before.get(403) ?? []).toEqual([]);
      }

      const reuse = await refresh(first.refresh_token);
      expect(reuse.status).toBe(400);
      expect((await reuse.json()).error).toBe('invalid_grant');

      for (const token of [first.access_token, second.access_token]) {
        const after = await statusesWith(token);
        expect([...after.keys()], 'every guarded route answers 401 invalid_token').toEqual([401]);
        expect(after.get(401)).toHaveLength(guarded.length);
      }
      // The newest refresh token of the family is dead too.
      expect((await refresh(second.refresh_token)).status).toBe(400);

      // Another login of the same account is another family: untouched.
      const untouched = await statusesWith(other.access_token);
      expect(untouched.get(401) ?? []).toEqual([]);
      expect((await refresh(other.refresh_token)).status).toBe(200);
    });
  });
}

/**
 * A change of an account's password, role or enabled flag, or its deletion, ends every token it holds at
 * once, whatever grant issued it: access tokens of the authorization_code, refresh_token and
 * client_credentials grants, refresh tokens, and authorization codes not yet redeemed. A login after the
 * change works.
 */
type Change = 'password' | 'role' | 'disable' | 'delete';
const CHANGES: Change[] = ['password', 'role', 'disable', 'delete'];

interface Held {
  codeAccess: string;
  refreshedAccess: string;
  clientCredentialsAccess: string;
  refreshToken: string;
  pendingCode: { code: string; verifier: string };
}

interface Node {
  app: { request(path: string, init?: RequestInit): Response | Promise<Response> };
}

const json = (body: unknown) => ({
  authorization: adminAuth,
  'content-type': 'application/json',
  body: JSON.stringify(body),
});
async function adminCall(node: Node, method: string, path: string, body: unknown): Promise<Response> {
  const { body: text, ...headers } = json(body);
  return node.app.request(path, { method, headers, body: text });
}

/** Every kind of token an account can hold, obtained through the token endpoint. */
async function holdTokens(node: Node, username: string, password: string): Promise<Held> {
  const code = (await loginWithCode(node.app, username, password)).body;
  const refreshed = await postForm(node.app, '/oauth2/token', {
    grant_type: 'refresh_token',
    refresh_token: String(code.refresh_token),
    client_id: 'bims-docs',
  });
  expect(refreshed.status).toBe(200);
  const rotated = await refreshed.json();
  const cc = await postForm(node.app, '/oauth2/token', {
    grant_type: 'client_credentials',
    client_id: username,
    client_secret: password,
  });
  expect(cc.status).toBe(200);
  const { verifier, challenge } = await pkcePair();
  const signedIn = await signIn(node.app, username, password, { challenge });
  expect(signedIn.status).toBe(302);
  return {
    codeAccess: String(code.access_token),
    refreshedAccess: String(rotated.access_token),
    clientCredentialsAccess: String((await cc.json()).access_token),
    refreshToken: String(rotated.refresh_token),
    pendingCode: { code: new URL(signedIn.headers.get('location')!).searchParams.get('code')!, verifier },
  };
}

async function change(node: Node, kind: Change, id: number, username: string): Promise<void> {
  const res =
    kind === 'delete'
      ? await adminCall(node, 'DELETE', '/admin/accounts/delete', { accounts: [{ id }] })
      : await adminCall(
          node,
          'POST',
          '/admin/accounts/change',
          kind === 'password'
            ? { id, password: `${username}-new-password` }
            : kind === 'role'
              ? { id, role: 'ADJUDICATOR' }
              : { id, enabled: false },
        );
  expect(res.status).toBe(200);
}

const accessTokens = (held: Held) => ({
  authorization_code: held.codeAccess,
  refresh_token: held.refreshedAccess,
  client_credentials: held.clientCredentialsAccess,
});
const redeem = (node: Node, pending: Held['pendingCode']) =>
  postForm(node.app, '/oauth2/token', {
    grant_type: 'authorization_code',
    code: pending.code,
    redirect_uri: DOCS_REDIRECT,
    code_verifier: pending.verifier,
    client_id: 'bims-docs',
  });
const refreshWith = (node: Node, token: string) =>
  postForm(node.app, '/oauth2/token', { grant_type: 'refresh_token', refresh_token: token, client_id: 'bims-docs' });

/** Statuses of a few routes across the surfaces (ADMIN, root: both scope ADMIN; USER) for a Bearer token. */
async function sampleStatuses(node: Node, token: string): Promise<number[]> {
  const out: number[] = [];
  for (const path of ['/admin/accounts/count', '/operations/count', '/user/management/default-properties']) {
    const res = await node.app.request(path, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    out.push(res.status);
  }
  return out;
}

async function createAdmin(node: Node, username: string): Promise<number> {
  const res = await adminCall(node, 'POST', '/admin/accounts/create', {
    username,
    password: `${username}-password`,
    role: 'ADMIN',
  });
  expect(res.status).toBe(201);
  return (await res.json()).id;
}

for (const dialect of serviceDialects) {
  describe(`a change of credentials ends every token on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    beforeAll(async () => {
      booted = await bootForTest(dialect, NO_SIDECAR_ENV);
    });
    afterAll(async () => {
      await booted?.close();
    });

    for (const kind of CHANGES) {
      it(`${kind}: access tokens of all three grants, refresh tokens and pending codes`, async () => {
        const username = `cv-${kind}`;
        const id = await createAdmin(booted, username);
        const held = await holdTokens(booted, username, `${username}-password`);
        for (const token of Object.values(accessTokens(held)))
          expect(await sampleStatuses(booted, token)).toEqual([200, 200, 200]);

        await change(booted, kind, id, username);

        for (const [grant, token] of Object.entries(accessTokens(held))) {
          if (kind === 'password') {
            // The defect reported: every guarded route, not only the token endpoint.
            const after = await statusesOn(booted, token);
            expect([...after.keys()], `${grant} after a password change`).toEqual([401]);
          } else {
            expect(await sampleStatuses(booted, token), `${grant} after ${kind}`).toEqual([401, 401, 401]);
          }
        }
        const refused = await refreshWith(booted, held.refreshToken);
        expect(refused.status).toBe(400);
        expect((await refused.json()).error).toBe('invalid_grant');
        const late = await redeem(booted, held.pendingCode);
        expect(late.status).toBe(400);
        expect((await late.json()).error).toBe('invalid_grant');

        if (kind === 'password' || kind === 'role') {
          const password = kind === 'password' ? `${username}-new-password` : `${username}-password`;
          const fresh = await holdTokens(booted, username, password);
          const expected = kind === 'role' ? [403, 403, 200] : [200, 200, 200];
          for (const token of Object.values(accessTokens(fresh)))
            expect(await sampleStatuses(booted, token)).toEqual(expected);
        }
      });
    }

    it('a change that touches none of password, role or enabled (a rename) keeps the tokens', async () => {
      const id = await createAdmin(booted, 'cv-rename');
      const held = await holdTokens(booted, 'cv-rename', 'cv-rename-password');
      expect((await adminCall(booted, 'POST', '/admin/accounts/change', { id, username: 'cv-renamed' })).status).toBe(
        200,
      );
      for (const token of Object.values(accessTokens(held)))
        expect(await sampleStatuses(booted, token)).toEqual([200, 200, 200]);
      expect((await refreshWith(booted, held.refreshToken)).status).toBe(200);
    });
  });
}

/** The status of every guarded route for a Bearer token, grouped by status; a 401 without invalid_token counts under -1. */
async function statusesOn(node: Node, token: string): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  for (const route of guarded) {
    const res = await node.app.request(`http://127.0.0.1:8080${concretePath(route.path)}`, {
      method: route.spec.method.toUpperCase(),
      headers: { authorization: `Bearer ${token}` },
    });
    await res.arrayBuffer();
    const status =
      res.status === 401 && !/error="invalid_token"/.test(res.headers.get('www-authenticate') ?? '') ? -1 : res.status;
    out.set(status, [...(out.get(status) ?? []), `${route.spec.method.toUpperCase()} ${route.path}`]);
  }
  return out;
}

/** Two service processes on one PostgreSQL database: a change through one ends the tokens on the other at once. */
describe.skipIf(!process.env.DATABASE_URL)('a change of credentials ends tokens on every node (PostgreSQL)', () => {
  let a: Awaited<ReturnType<typeof bootForTest>>;
  let b: Booted;
  beforeAll(async () => {
    a = await bootForTest('postgres', NO_SIDECAR_ENV);
    b = await boot({ config: a.config, runtime: 'test', hostname: 'second-node', logger: createLogger('silent') });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  for (const kind of CHANGES) {
    it(`${kind} through one node`, async () => {
      const username = `two-${kind}`;
      const id = await createAdmin(a, username);
      const held = await holdTokens(a, username, `${username}-password`);
      for (const token of Object.values(accessTokens(held)))
        expect(await sampleStatuses(b, token)).toEqual([200, 200, 200]);
      await change(b, kind, id, username);
      for (const token of Object.values(accessTokens(held))) {
        expect(await sampleStatuses(a, token)).toEqual([401, 401, 401]);
        expect(await sampleStatuses(b, token)).toEqual([401, 401, 401]);
      }
      expect((await refreshWith(a, held.refreshToken)).status).toBe(400);
      expect((await redeem(a, held.pendingCode)).status).toBe(400);
    });
  }
});
