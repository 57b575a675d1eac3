import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, adminAuth, basic, bootForTest, serviceDialects } from '../support/databases.js';
import { send as request } from '../support/http.js';

for (const dialect of serviceDialects) {
  describe(`accounts and login on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    beforeAll(async () => {
      booted = await bootForTest(dialect, { BIMS_MAX_BODY_BYTES: '65536' });
    });
    afterAll(async () => {
      await booted?.close();
    });

    const send = (
      method: string,
      path: string,
      body?: unknown,
      auth: string | null = adminAuth,
      headers: Record<string, string> = {},
    ) => request(booted.app, method, path, body, auth, headers);

    it('creates accounts and never shows a password or hash', async () => {
      const res = await send('POST', '/admin/accounts/create', {
        username: 'alice',
        password: 'alice-password',
        role: 'USER',
      });
      expect(res.status).toBe(201);
      const body = await res.json();
      expect(body).toMatchObject({ username: 'alice', role: 'USER', enabled: true });
      expect(Object.keys(body).sort()).toEqual(['createdAt', 'enabled', 'id', 'role', 'updatedAt', 'username']);
      const row = await booted.services.ctx.db
        .selectFrom('accounts')
        .selectAll()
        .where('username', '=', 'alice')
        .executeTakeFirstOrThrow();
      expect(row.password_hash).toMatch(/^pbkdf2-sha256\$\d+\$/);
      expect(row.password_hash).not.toContain('alice-password');
    });

    it('refuses a taken user name with 409 and a short password with 400 naming the field', async () => {
      const taken = await send('POST', '/admin/accounts/create', {
        username: 'alice',
        password: 'another-password',
        role: 'USER',
      });
      expect(taken.status).toBe(409);
      expect(taken.headers.get('content-type')).toMatch(/application\/problem\+json/);
      const short = await send('POST', '/admin/accounts/create', { username: 'bob', password: 'short', role: 'USER' });
      expect(short.status).toBe(400);
      const problem = await short.json();
      expect(problem.errors).toEqual([{ field: 'body.password', message: expect.stringMatching(/at least 8/) }]);
      expect(
        await booted.services.ctx.db
          .selectFrom('accounts')
          .select('id')
          .where('username', '=', 'bob')
          .executeTakeFirst(),
      ).toBeUndefined();
    });

    it('rejects malformed JSON, wrong types, unknown fields and other media types with 4xx problems', async () => {
      const malformed = await send('POST', '/admin/accounts/create', '{"username": ');
      expect(malformed.status).toBe(400);
      expect((await malformed.json()).errors[0].field).toBe('body');
      const wrongType = await send('POST', '/admin/accounts/create', {
        username: 7,
        password: 'long-enough',
        role: 'USER',
      });
      expect(wrongType.status).toBe(400);
      expect((await wrongType.json()).errors[0].field).toBe('body.username');
      const unknown = await send('POST', '/admin/accounts/create', {
        username: 'carol',
        password: 'long-enough',
        role: 'USER',
        admin: true,
      });
      expect(unknown.status).toBe(400);
      expect((await unknown.json()).errors[0].field).toBe('body.admin');
      const xml = await send('POST', '/admin/accounts/create', '<account/>', adminAuth, {
        'content-type': 'application/xml',
      });
      expect(xml.status).toBe(415);
      const array = await send('POST', '/admin/accounts/create', []);
      expect(array.status).toBe(400);
      const nul = await send('POST', '/admin/accounts/create', {
        username: 'nul',
        password: 'pass\u0000word',
        role: 'USER',
      });
      expect(nul.status).toBe(400);
      expect((await nul.json()).errors[0].field).toBe('body.password');
      const hugeId = await send('POST', '/admin/accounts/change', { id: 2 ** 31, enabled: false });
      expect(hugeId.status).toBe(400);
      expect((await hugeId.json()).errors[0].field).toBe('body.id');
      const hugeDelete = await send('DELETE', '/admin/accounts/delete', { accounts: [{ id: 99_999_999_999 }] });
      expect(hugeDelete.status).toBe(400);
    });

    it('answers 413 for a body over the limit', async () => {
      const huge = await send('POST', '/admin/accounts/create', {
        username: 'x',
        password: 'y'.repeat(70_000),
        role: 'USER',
      });
      expect(huge.status).toBe(413);
      expect(huge.headers.get('content-type')).toMatch(/application\/problem\+json/);
    });

    it('lists, filters, sorts, pages and counts', async () => {
      for (const [username, role] of [
        ['adj1', 'ADJUDICATOR'],
        ['adj2', 'ADJUDICATOR'],
        ['user2', 'USER'],
      ] as const) {
        expect(
          (await send('POST', '/admin/accounts/create', { username, password: 'password-123', role })).status,
        ).toBe(201);
      }
      const adjudicators = await (await send('GET', '/admin/accounts?role=ADJUDICATOR&sort=username,desc')).json();
      expect(adjudicators.map((a: { username: string }) => a.username)).toEqual(['adj2', 'adj1']);
      const prefixed = await (await send('GET', '/admin/accounts?username=adj&size=1&page=1')).json();
      expect(prefixed.map((a: { username: string }) => a.username)).toEqual(['adj2']);
      expect(await (await send('GET', '/admin/accounts/count?role=USER')).json()).toEqual({ count: 2 });
      expect(await (await send('GET', '/admin/accounts/count')).json()).toEqual({ count: 5 });
      const badSort = await send('GET', '/admin/accounts?sort=password');
      expect(badSort.status).toBe(400);
      const badSize = await send('GET', '/admin/accounts?size=5000');
      expect(badSize.status).toBe(400);
      expect((await badSize.json()).errors[0]).toEqual({ field: 'query.size', message: 'must be at most 1000' });
      expect((await (await send('GET', '/admin/accounts?page=x')).json()).errors[0]).toEqual({
        field: 'query.page',
        message: 'must be an integer',
      });
      const unknownFilter = await send('GET', '/admin/accounts?colour=blue');
      expect(unknownFilter.status).toBe(400);
    });

    it('changes role, password and enabled state; a disabled account cannot authenticate', async () => {
      const [bob] = await (await send('GET', '/admin/accounts?username=user2')).json();
      const changed = await send('POST', '/admin/accounts/change', {
        id: bob.id,
        role: 'ADJUDICATOR',
        password: 'new-password-1',
      });
      expect(changed.status).toBe(200);
      expect((await changed.json()).role).toBe('ADJUDICATOR');
      expect(
        (await send('GET', '/adjudicator/management/info', undefined, basic('user2', 'new-password-1'))).status,
      ).not.toBe(401);
      expect((await send('GET', '/user/management/info', undefined, basic('user2', 'password-123'))).status).toBe(401);
      await send('POST', '/admin/accounts/change', { id: bob.id, enabled: false });
      const disabled = await send('GET', '/user/management/info', undefined, basic('user2', 'new-password-1'));
      expect(disabled.status).toBe(401);
      const missing = await send('POST', '/admin/accounts/change', { id: 99999, enabled: false });
      expect(missing.status).toBe(404);
    });

    it('never removes or demotes the last enabled ADMIN', async () => {
      const [admin] = await (await send('GET', '/admin/accounts?username=admin')).json();
      const demote = await send('POST', '/admin/accounts/change', { id: admin.id, role: 'USER' });
      expect(demote.status).toBe(409);
      const remove = await send('DELETE', '/admin/accounts/delete', { accounts: [{ username: 'admin' }] });
      expect(remove.status).toBe(409);
      expect((await send('GET', '/admin/accounts/count?role=ADMIN')).status).toBe(200);
    });

    it('deletes accounts all or nothing', async () => {
      const partial = await send('DELETE', '/admin/accounts/delete', {
        accounts: [{ username: 'adj1' }, { id: 424242 }],
      });
      expect(partial.status).toBe(404);
      expect(await (await send('GET', '/admin/accounts/count?username=adj1')).json()).toEqual({ count: 1 });
      const ok = await send('DELETE', '/admin/accounts/delete', {
        accounts: [{ username: 'adj1' }, { username: 'adj2' }],
      });
      expect(ok.status).toBe(200);
      expect((await ok.json()).deleted.map((a: { username: string }) => a.username).sort()).toEqual(['adj1', 'adj2']);
      expect(await (await send('GET', '/admin/accounts/count?username=adj')).json()).toEqual({ count: 0 });
    });

    it('enforces scopes: 401 without or with bad credentials, 403 with too low a role', async () => {
      const none = await send('GET', '/admin/accounts', undefined, null);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Basic realm="bims"/);
      expect((await send('GET', '/admin/accounts', undefined, basic('admin', 'wrong-password'))).status).toBe(401);
      expect((await send('GET', '/admin/accounts', undefined, 'Bearer not.a.token')).status).toBe(401);
      expect((await send('GET', '/admin/accounts', undefined, 'Digest abc')).status).toBe(401);
      expect((await send('GET', '/admin/accounts', undefined, 'Basic !!!')).status).toBe(401);
      const user = await send('GET', '/admin/accounts', undefined, basic('alice', 'alice-password'));
      expect(user.status).toBe(403);
      expect((await user.json()).type).toMatch(/\/forbidden$/);
    });

    it('POST /login reports the authentication type and authorities', async () => {
      const res = await send('POST', '/login', { username: 'admin', password: ADMIN_PASSWORD }, null);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        authenticationType: 'BASIC',
        username: 'admin',
        role: 'ADMIN',
        authorities: ['ROLE_ADMIN', 'ROLE_ADJUDICATOR', 'ROLE_USER'],
      });
      const user = await (await send('POST', '/login', undefined, basic('alice', 'alice-password'))).json();
      expect(user.authorities).toEqual(['ROLE_USER']);
      expect((await send('POST', '/login', { username: 'admin', password: 'nope' }, null)).status).toBe(401);
      expect((await send('POST', '/login', { username: 'admin' }, null)).status).toBe(400);
    });

    it('throttles repeated failed logins for a user name', async () => {
      await send('POST', '/admin/accounts/create', { username: 'target', password: 'target-password', role: 'USER' });
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++)
        statuses.push((await send('POST', '/login', { username: 'target', password: `guess-${i}` }, null)).status);
      expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
      expect(statuses.slice(5)).toContain(429);
      const locked = await send('POST', '/login', { username: 'target', password: 'target-password' }, null);
      expect(locked.status).toBe(429);
      expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    });

    it('sets security headers and keeps CORS closed by default', async () => {
      const res = await send('GET', '/admin/accounts/count', undefined, adminAuth, { origin: 'https://evil.example' });
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(res.headers.get('x-request-id')).toBeTruthy();
    });
  });
}
