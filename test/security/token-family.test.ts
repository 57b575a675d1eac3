import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, bootForTest, dialects } from '../support/databases.js';
import { NO_SIDECAR_ENV } from '../support/external-ops.js';
import { loginWithCode, postForm } from '../support/oauth-flow.js';
import { allRoutes } from '../support/routes.js';
import { concretePath } from '../support/seed.js';

/**
 * A refresh token presented again after it was rotated means two parties hold the login: the whole family
 * is revoked, and the access tokens already issued from it must stop working at once, on every route, not
 * only on the token endpoint. A login of its own (another family) must be unaffected.
 */

// Open operations read no credentials, so a revoked token proves nothing there.
const guarded = allRoutes().filter((r) => !r.open);

for (const dialect of dialects) {
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
          new Request(`http://127.0.0.1:8080${concretePath(route.path)}`, { method: route.spec.method.toUpperCase(), headers: { authorization: `Bearer ${String(accessToken)}` } }),
        );
        if (res.status === 401 && !/error="invalid_token"/.test(res.headers.get('www-authenticate') ?? '')) out.set(-1, [...(out.get(-1) ?? []), route.path]);
        out.set(res.status, [...(out.get(res.status) ?? []), `${route.spec.method.toUpperCase()} ${route.path}`]);
      }
      return out;
    }
    const refresh = (token: unknown) => postForm(app, '/oauth2/token', { grant_type: 'refresh_token', refresh_token: String(token), client_id: 'bims-docs' });

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
