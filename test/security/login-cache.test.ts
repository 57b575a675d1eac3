import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, bootForTest } from '../support/databases.js';
import { send as request } from '../support/http.js';
import { writeGenerationOf } from '../../src/db/write-generation.js';
import { credentialsChanged } from '../../src/services/auth/credential-cache.js';

/**
 * Basic credentials on PGlite: the account row a password is checked against comes from the credential cache
 * (src/services/auth/credential-cache.ts) instead of a statement per request, and every change that could end a
 * login (password, name, role, enabled flag, deletion) empties it when it commits, so the very next request
 * is judged on the new row.
 */
describe('the account row of a Basic login on PGlite', () => {
  let booted: Awaited<ReturnType<typeof bootForTest>>;
  const send = (method: string, path: string, body?: unknown, auth?: string) =>
    request(booted.app, method, path, body, auth);
  /** Statements PGlite ran for one request (the client's count, db/write-generation.ts). */
  const statementsOf = async (run: () => Promise<Response>) => {
    const writes = writeGenerationOf(booted.services.ctx.db)!;
    const before = writes.statements;
    const res = await run();
    return { status: res.status, statements: writes.statements - before };
  };

  beforeAll(async () => {
    booted = await bootForTest('pglite');
  });
  afterAll(async () => {
    await booted?.close();
  });

  it('is read once, and every change of the account is seen by the next request', async () => {
    const created = await send('POST', '/admin/accounts/create', {
      username: 'cached',
      password: 'first-password',
      role: 'USER',
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    const info = (user: string, password: string, surface = 'user') =>
      statementsOf(() => send('GET', `/${surface}/management/info`, undefined, basic(user, password)));
    const list = () =>
      statementsOf(() =>
        send('GET', '/user/subjects/id-list?page=0&size=1', undefined, basic('cached', 'first-password')),
      );

    // Statements of a request whose account row is cached, and of the same request once the cache is emptied.
    expect((await list()).status).toBe(200);
    const cached = await list();
    credentialsChanged();
    const read = await list();
    const cachedAgain = await list();
    expect([cached.status, read.status, cachedAgain.status]).toEqual([200, 200, 200]);
    const db = booted.services.ctx.db;
    const one = await statementsOf(async () => {
      // The account statement's shape, made once more by hand.
      await db.selectFrom('accounts').select('id').where('username', '=', 'cached').execute();
      return new Response();
    });
    // The client's count moves several times for one statement (PGlite's own protocol entries): one such query's.
    expect(read.statements - cached.statements).toBe(one.statements);
    expect(cachedAgain.statements).toBe(cached.statements);

    const change = async (body: Record<string, unknown>) =>
      expect((await send('POST', '/admin/accounts/change', { id, ...body })).status).toBe(200);

    await change({ password: 'second-password' });
    expect((await info('cached', 'first-password')).status).toBe(401);
    expect((await info('cached', 'second-password')).status).toBe(200);

    await change({ username: 'renamed' });
    expect((await info('cached', 'second-password')).status).toBe(401);
    expect((await info('renamed', 'second-password')).status).toBe(200);

    await change({ role: 'ADJUDICATOR' });
    expect((await info('renamed', 'second-password', 'adjudicator')).status).toBe(200);
    await change({ role: 'USER' });
    expect((await info('renamed', 'second-password', 'adjudicator')).status).toBe(403);

    await change({ enabled: false });
    expect((await info('renamed', 'second-password')).status).toBe(401);
    await change({ enabled: true });
    expect((await info('renamed', 'second-password')).status).toBe(200);

    expect((await send('DELETE', '/admin/accounts/delete', { accounts: [{ id }] })).status).toBe(200);
    expect((await info('renamed', 'second-password')).status).toBe(401);
  });
});
