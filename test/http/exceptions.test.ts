import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, basic, bootForTest, serviceDialects } from '../support/databases.js';
import { send as request } from '../support/http.js';

/** Records as an export of another installation would hold them: varied types, surfaces and times. */
function syntheticRecords(count: number) {
  const surfaces = ['admin', 'root', 'user'] as const;
  return Array.from({ length: count }, (_, i) => ({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    type: i % 2 === 0 ? 'TypeError' : 'RangeError',
    message: `synthetic failure ${i}`,
    ...(i % 3 === 0 ? { operationId: 'getSubjects' } : {}),
    method: 'GET',
    path: i % 4 === 0 ? `/admin/subjects/s-${i}` : `/user/operations/${i}`,
    ...(i % 5 === 0 ? { accountId: 1 } : {}),
    surface: surfaces[i % 3]!,
    callStack: `${i % 2 === 0 ? 'TypeError' : 'RangeError'}: synthetic failure ${i}\n    at somewhere (file.ts:${i}:1)`,
  }));
}

for (const dialect of serviceDialects) {
  describe(`exception log on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    let failureId: string;
    beforeAll(async () => {
      booted = await bootForTest(dialect);
    });
    afterAll(async () => {
      await booted?.close();
    });

    const send = (method: string, path: string, body?: unknown, auth: string | null = adminAuth) =>
      request(booted.app, method, path, body, auth);
    const json = async (method: string, path: string, body?: unknown) => {
      const res = await send(method, path, body);
      expect(res.status, `${method} ${path}: ${res.status}`).toBe(200);
      return res.json();
    };

    it('records a real unhandled failure and answers 500 with only its id', async () => {
      // Schema drift, for real: the column the account list sorts by is gone, so the database refuses the query.
      await sql`alter table accounts drop column updated_at`.execute(booted.services.ctx.db);
      const res = await send('GET', '/admin/accounts?sort=updatedAt,desc');
      expect(res.status).toBe(500);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      const text = await res.text();
      const problem = JSON.parse(text);
      expect(problem.type).toMatch(/\/internal$/);
      expect(problem.exceptionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(problem.detail).toContain(problem.exceptionId);
      // Neither the stack, nor source paths, nor the database's own words reach the client.
      expect(text).not.toMatch(/\bat \S+ \(|\.ts:|node_modules|\/work\/|updated_at|does not exist/);
      failureId = problem.exceptionId;

      const row = await booted.services.ctx.db
        .selectFrom('exceptions')
        .selectAll()
        .where('id', '=', failureId)
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({
        operation_id: 'getAccounts',
        method: 'GET',
        path: '/admin/accounts',
        surface: 'admin',
        account_id: 1,
      });
      expect(row.message).toMatch(/updated_at/);
      expect(row.call_stack).toMatch(/\n\s+at /);
      await sql`alter table accounts add column updated_at timestamptz not null default now()`.execute(
        booted.services.ctx.db,
      );
    });

    it('reads the exception by id and its call stack apart', async () => {
      const one = await json('GET', `/admin/exceptions/id?id=${failureId}`);
      expect(one).toMatchObject({
        id: failureId,
        operationId: 'getAccounts',
        method: 'GET',
        path: '/admin/accounts',
        surface: 'admin',
        accountId: 1,
      });
      expect(one).not.toHaveProperty('callStack');
      expect(new Date(one.timestamp).toISOString()).toBe(one.timestamp);
      const stack = await json('GET', `/exceptions/callstack?id=${failureId}`);
      expect(stack.id).toBe(failureId);
      expect(stack.callStack).toMatch(/\n\s+at /);
      for (const path of ['/admin/exceptions/id?id=nope', '/admin/exceptions/callstack?id=nope']) {
        const missing = await send('GET', path);
        expect(missing.status).toBe(404);
        expect((await missing.json()).type).toMatch(/\/not-found$/);
      }
      expect((await send('GET', '/admin/exceptions/id')).status).toBe(400);
    });

    it('imports a list, and importing it again adds nothing', async () => {
      const records = syntheticRecords(30);
      expect(await json('POST', '/admin/exceptions/import', records)).toEqual({ imported: 30, skipped: 0 });
      expect(await json('POST', '/exceptions/import', records)).toEqual({ imported: 0, skipped: 30 });
      expect(await json('GET', '/admin/exceptions/count')).toEqual({ count: 31 });
    });

    it('lists newest first, filters, counts and pages', async () => {
      const all = await json('GET', '/admin/exceptions?size=1000');
      expect(all).toHaveLength(31);
      expect(all[0].id).toBe(failureId); // recorded now, so newer than the 2026-01-01 imports
      const stamps = all.map((e: { timestamp: string }) => e.timestamp);
      expect([...stamps].sort().reverse()).toEqual(stamps);

      const records = syntheticRecords(30);
      const cases: [string, (r: (typeof records)[number]) => boolean][] = [
        ['type=TypeError', (r) => r.type === 'TypeError'],
        ['operationId=getSubjects', (r) => r.operationId === 'getSubjects'],
        ['path=/admin/subjects/', (r) => r.path.startsWith('/admin/subjects/')],
        ['surface=user', (r) => r.surface === 'user'],
        ['from=2026-01-01T00:00:10Z&to=2026-01-01T00:00:20Z', (_r) => false],
        ['type=RangeError&surface=root', (r) => r.type === 'RangeError' && r.surface === 'root'],
      ];
      for (const [filter, keep] of cases) {
        const expected = filter.startsWith('from=') ? records.slice(10, 20) : records.filter(keep);
        const page = await json('GET', `/admin/exceptions?${filter}&size=1000&sort=timestamp,asc`);
        expect(
          page.map((e: { id: string }) => e.id),
          filter,
        ).toEqual(expected.map((r) => r.id));
        expect(await json('GET', `/admin/exceptions/count?${filter}`), filter).toEqual({ count: expected.length });
      }
      // LIKE wildcards in a path prefix are taken literally.
      expect(await json('GET', '/admin/exceptions/count?path=/admin/sub%25')).toEqual({ count: 0 });

      const first = await json('GET', '/admin/exceptions?size=7&page=0&sort=timestamp,asc');
      const second = await json('GET', '/admin/exceptions?size=7&page=1&sort=timestamp,asc');
      expect([...first, ...second].map((e: { id: string }) => e.id)).toEqual(records.slice(0, 14).map((r) => r.id));
      const byType = await json('GET', '/admin/exceptions?surface=root&sort=type,desc&size=1000');
      expect(byType[0].type).toBe('TypeError');
      expect(byType.at(-1).type).toBe('RangeError');
    });

    it('refuses unknown filters, bad sorts, bad dates and an inverted range with 400 naming the field', async () => {
      for (const [query, field] of [
        ['colour=red', 'query.colour'],
        ['sort=message,asc', 'query.sort'],
        ['from=yesterday', 'query.from'],
        ['from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'query.from'],
        ['surface=moon', 'query.surface'],
        ['size=0', 'query.size'],
      ]) {
        const res = await send('GET', `/admin/exceptions?${query}`);
        expect(res.status, query).toBe(400);
        expect(
          (await res.json()).errors.map((e: { field: string }) => e.field),
          query,
        ).toContain(field);
      }
    });

    it('exports everything as a download, clears, and imports the export back unchanged', async () => {
      const exported = await send('GET', '/admin/exceptions/export');
      expect(exported.status).toBe(200);
      expect(exported.headers.get('content-disposition')).toBe('attachment; filename="exceptions.json"');
      expect(exported.headers.get('content-type')).toMatch(/application\/json/);
      const records = await exported.json();
      expect(records).toHaveLength(31);
      const real = records.find((r: { id: string }) => r.id === failureId);
      expect(real.callStack).toMatch(/\n\s+at /);

      expect(await json('DELETE', '/admin/exceptions/clear-db')).toEqual({ removed: 31 });
      expect(await json('GET', '/admin/exceptions/count')).toEqual({ count: 0 });
      expect(await json('DELETE', '/exceptions/clear-db')).toEqual({ removed: 0 });

      expect(await json('POST', '/admin/exceptions/import', records)).toEqual({ imported: 31, skipped: 0 });
      expect(await json('POST', '/admin/exceptions/import', records)).toEqual({ imported: 0, skipped: 31 });
      const again = await (await send('GET', '/exceptions/export')).json();
      expect(again).toEqual(records);
    });

    it('refuses a bad import as a whole, writing nothing', async () => {
      const before = await json('GET', '/admin/exceptions/count');
      const fresh = syntheticRecords(40)
        .slice(35)
        .map((r) => ({ ...r, id: `fresh-${r.id}` }));
      const broken = [...fresh.slice(0, 3), { ...fresh[3]!, timestamp: 'last tuesday' }, fresh[4]];
      const res = await send('POST', '/admin/exceptions/import', broken);
      expect(res.status).toBe(400);
      const problem = await res.json();
      expect(problem.errors.map((e: { field: string }) => e.field)).toEqual(['body.3.timestamp']);
      for (const bad of [
        { records: fresh },
        [{ ...fresh[0], extra: true }],
        [{ ...fresh[0], surface: 'moon' }],
        '[{"id": ',
      ]) {
        expect((await send('POST', '/admin/exceptions/import', bad)).status).toBe(400);
      }
      expect(await json('GET', '/admin/exceptions/count')).toEqual(before);
    });

    it('streams an export larger than one batch, oldest first', async () => {
      const many = syntheticRecords(1200).map((r) => ({ ...r, id: `bulk-${r.id}` }));
      expect(await json('POST', '/admin/exceptions/import', many)).toEqual({ imported: 1200, skipped: 0 });
      const exported = await (await send('GET', '/admin/exceptions/export')).json();
      const total = (await json('GET', '/admin/exceptions/count')).count;
      expect(exported).toHaveLength(total);
      const order = exported.map((r: { timestamp: string; id: string }) => `${r.timestamp} ${r.id}`);
      expect([...order].sort()).toEqual(order);
      expect(exported.filter((r: { id: string }) => r.id.startsWith('bulk-'))).toEqual(
        many.sort((a, b) => (a.timestamp + a.id < b.timestamp + b.id ? -1 : 1)),
      );
    });

    it('belongs to ADMIN on the admin and root surfaces only', async () => {
      const created = await send('POST', '/admin/accounts/create', {
        username: 'adj',
        password: 'adj-password',
        role: 'ADJUDICATOR',
      });
      expect(created.status).toBe(201);
      expect((await send('GET', '/exceptions', undefined, basic('adj', 'adj-password'))).status).toBe(403);
      expect((await send('GET', '/exceptions', undefined, null)).status).toBe(401);
      const user = await send('GET', '/user/exceptions');
      expect(user.status).toBe(404);
      expect((await user.json()).type).toMatch(/\/route-not-found$/);
    });
  });
}
