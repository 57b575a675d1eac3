import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgres } from '../support/databases.js';
import { startService, type ServiceProcess } from '../support/service-process.js';
import { NO_DASHBOARD, sharedExtraction } from '../support/shared-extraction.js';
import { connectDatabase } from '../../src/db/connect.js';
import { seedSubject } from '../support/subject-rows.js';

/**
 * Each node keeps the accounts behind Bearer tokens in memory for a while (src/services/auth/credential-cache.ts).
 * A change made through one node must still end the account's tokens at once on another: two real service
 * processes on one PostgreSQL database, a token used on node B until B holds its account in memory, the
 * change made through node A, and the very next request on B must be refused. Many trials, failures counted.
 */

const PASSWORD = 'admin-password-for-credential-cache';
const admin = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
const CHANGES = ['disable', 'password', 'role', 'delete'] as const;
const TRIALS_PER_CHANGE = 8;

describe.skipIf(!process.env.DATABASE_URL)('cached credentials across two service processes (PostgreSQL)', () => {
  let database: Awaited<ReturnType<typeof freshPostgres>>;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let urlA: string;
  let urlB: string;

  beforeAll(async () => {
    // A copy of the migrated template, so both nodes start at once (neither migrates: the migrations on
    // PostgreSQL are run by the suites whose service starts on an empty database: crash-safety, workers).
    database = await freshPostgres({ migrated: true });
    const env = {
      DATABASE_URL: database.url,
      BIMS_ADMIN_PASSWORD: PASSWORD,
      BIMS_PASSWORD_ITERATIONS: '10000',
      BIMS_EXTRACTION_WORKERS: '1',
      ...sharedExtraction(), // the run's one extraction service when there is one (test/support/shared-extraction.ts)
      ...NO_DASHBOARD,
    };
    a = startService(env, { startupMs: 90_000 });
    b = startService(env, { startupMs: 90_000 });
    [urlA, urlB] = await Promise.all([a.listening, b.listening]);
  }, 200_000);

  afterAll(async () => {
    for (const node of [a, b]) {
      node?.child.kill('SIGTERM');
      await node?.exited;
    }
    await database?.drop();
  });

  const call = (url: string, method: string, path: string, auth: string, body?: unknown) =>
    fetch(`${url}${path}`, {
      method,
      headers: { authorization: auth, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });

  async function tokenFor(url: string, username: string, password: string): Promise<string> {
    const res = await fetch(`${url}/oauth2/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    });
    expect(res.status).toBe(200);
    return String((await res.json()).access_token);
  }

  async function statusOf(url: string, token: string): Promise<number> {
    const res = await call(url, 'GET', '/admin/accounts/count', `Bearer ${token}`);
    await res.arrayBuffer();
    return res.status;
  }

  it(`a disabled, re-passworded, re-roled or deleted account's token is refused by the other node on its next request (${TRIALS_PER_CHANGE * CHANGES.length} trials)`, async () => {
    const failures: string[] = [];
    let trial = 0;
    for (let round = 0; round < TRIALS_PER_CHANGE; round++) {
      for (const kind of CHANGES) {
        const username = `cc-${kind}-${round}-${trial++}`;
        const created = await call(urlA, 'POST', '/admin/accounts/create', admin, {
          username,
          password: `${username}-password`,
          role: 'ADMIN',
        });
        expect(created.status).toBe(201);
        const id = (await created.json()).id;
        const token = await tokenFor(urlA, username, `${username}-password`);
        // Used on both nodes until each holds the account in memory.
        for (let i = 0; i < 3; i++) {
          expect(await statusOf(urlB, token)).toBe(200);
          expect(await statusOf(urlA, token)).toBe(200);
        }
        const changed =
          kind === 'delete'
            ? await call(urlA, 'DELETE', '/admin/accounts/delete', admin, { accounts: [{ id }] })
            : await call(
                urlA,
                'POST',
                '/admin/accounts/change',
                admin,
                kind === 'disable'
                  ? { id, enabled: false }
                  : kind === 'password'
                    ? { id, password: `${username}-new` }
                    : { id, role: 'USER' },
              );
        expect(changed.status).toBe(200);
        const onB = await statusOf(urlB, token);
        const onA = await statusOf(urlA, token);
        if (onB !== 401) failures.push(`${kind} trial ${round}: node B answered ${onB}`);
        if (onA !== 401) failures.push(`${kind} trial ${round}: node A answered ${onA}`);
      }
    }
    expect(failures, `${failures.length} of ${2 * trial} requests after a change were not refused`).toEqual([]);
  }, 240_000);

  it('subject reads, which carry the account check in their own statement: refused by the other node on its next request', async () => {
    // A subject to read (rows as enrolment leaves them), a page that holds it, and a name that finds nothing:
    // the read's statement makes the check when it returns rows, the check is made on its own when it does not.
    const handle = await connectDatabase({ url: database.url });
    const subject = await seedSubject(handle.db, { subjectId: `cc-read-${Date.now()}` }).finally(() => handle.close());
    const reads = [
      `/admin/subjects/${subject.subjectId}`,
      `/admin/subjects/multimodal/id/${subject.id}`,
      '/admin/subjects?page=0&size=5',
      '/admin/subjects?page=99&size=5',
      '/admin/subjects/no-such-subject',
      `/user/subjects/operation/${subject.enrollUuid}`,
    ];
    const statuses = async (url: string, token: string) => {
      const out: number[] = [];
      for (const path of reads) {
        const res = await call(url, 'GET', path, `Bearer ${token}`);
        await res.arrayBuffer();
        out.push(res.status);
      }
      return out;
    };
    // Before the change: read (or not found, or not the caller's), as the account may.
    const allowed = [200, 200, 200, 200, 404, 404];
    const failures: string[] = [];
    for (let round = 0; round < 2; round++) {
      for (const kind of CHANGES) {
        const username = `cc-read-${kind}-${round}`;
        const created = await call(urlA, 'POST', '/admin/accounts/create', admin, {
          username,
          password: `${username}-password`,
          role: 'ADMIN',
        });
        expect(created.status).toBe(201);
        const id = (await created.json()).id;
        const token = await tokenFor(urlA, username, `${username}-password`);
        expect(await statuses(urlB, token)).toEqual(allowed);
        const changed =
          kind === 'delete'
            ? await call(urlA, 'DELETE', '/admin/accounts/delete', admin, { accounts: [{ id }] })
            : await call(
                urlA,
                'POST',
                '/admin/accounts/change',
                admin,
                kind === 'disable'
                  ? { id, enabled: false }
                  : kind === 'password'
                    ? { id, password: `${username}-new` }
                    : { id, role: 'USER' },
              );
        expect(changed.status).toBe(200);
        const onB = await statuses(urlB, token);
        if (onB.some((status) => status !== 401))
          failures.push(`${kind} round ${round}: node B answered ${onB.join(', ')}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('the change made on the other node: B changes, A refuses at once', async () => {
    const failures: string[] = [];
    for (let round = 0; round < TRIALS_PER_CHANGE; round++) {
      const username = `cc-reverse-${round}`;
      const created = await call(urlB, 'POST', '/admin/accounts/create', admin, {
        username,
        password: `${username}-password`,
        role: 'ADMIN',
      });
      const id = (await created.json()).id;
      const token = await tokenFor(urlB, username, `${username}-password`);
      for (let i = 0; i < 3; i++) expect(await statusOf(urlA, token)).toBe(200);
      expect((await call(urlB, 'POST', '/admin/accounts/change', admin, { id, enabled: false })).status).toBe(200);
      const onA = await statusOf(urlA, token);
      if (onA !== 401) failures.push(`trial ${round}: node A answered ${onA}`);
    }
    expect(failures).toEqual([]);
  }, 120_000);
});
