import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, adminAuth, bootForTest, dialects } from '../support/databases.js';
import { NO_SIDECAR_ENV } from '../support/external-ops.js';
import { attempt, PATHS } from '../support/login-paths.js';
import { boot, type Booted } from '../../src/runtime/bootstrap.js';
import { createLogger } from '../../src/logger.js';

/**
 * Login throttling a stranger cannot turn against a user (OWASP ASVS V2.2): failures are counted per
 * (account, address) with growing delays, and per address across accounts with a much higher budget. Every
 * way to present a password is tried: HTTP Basic on an operation, POST /login, the token endpoint's
 * client_credentials grant and the authorize page's sign-in form. The address comes from a test header,
 * as a runtime entry would report the socket's.
 */

const ADDRESS_BUDGET = 30;
const addressOf = (request: Request) => request.headers.get('x-test-address') ?? 'unknown';

type Booted2 = Awaited<ReturnType<typeof bootForTest>>;
async function createAccount(booted: { app: Booted['app'] }, username: string, role = 'USER'): Promise<void> {
  const res = await booted.app.request('/admin/accounts/create', {
    method: 'POST',
    headers: { authorization: adminAuth, 'content-type': 'application/json' },
    body: JSON.stringify({ username, password: `${username}-password`, role }),
  });
  expect(res.status).toBe(201);
}

// PostgreSQL too (dialects, not serviceDialects): concurrent guesses race to count failures, and their
// transactions interleave only on a pool of connections (PGlite's one connection runs them in turn).
for (const dialect of dialects) {
  describe(`login throttle on ${dialect}`, () => {
    let booted: Booted2;
    let skew = 0;
    beforeAll(async () => {
      booted = await bootForTest(
        dialect,
        { ...NO_SIDECAR_ENV, BIMS_LOGIN_ADDRESS_FAILURES: String(ADDRESS_BUDGET) },
        { clientAddress: addressOf, now: () => new Date(Date.now() + skew) },
      );
      for (const name of ['alice', 'bob', 'carol', 'dave', 'erin', 'frank']) await createAccount(booted, name);
    });
    afterAll(async () => {
      await booted?.close();
    });

    for (const path of PATHS) {
      it(`${path}: a stranger's failures for admin never refuse admin's password from another address`, async () => {
        const stranger = `stranger-${path}`;
        const seen: number[] = [];
        for (let i = 0; i < 8; i++) seen.push((await attempt(booted, path, 'admin', `guess-${i}`, stranger)).status);
        expect(seen.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
        expect(seen.slice(5)).toContain(429); // the stranger is slowed down
        expect((await attempt(booted, path, 'admin', ADMIN_PASSWORD, `office-${path}`)).status).toBe(200);
      });

      it(`${path}: failures for other accounts from an address never refuse a correct password from it`, async () => {
        const nat = `nat-${path}`;
        for (let i = 0; i < 7; i++) await attempt(booted, path, 'bob', `guess-${i}`, nat);
        for (let i = 0; i < 7; i++) await attempt(booted, path, 'nobody-at-all', `guess-${i}`, nat);
        expect((await attempt(booted, path, 'alice', 'alice-password', nat)).status).toBe(200);
        expect((await attempt(booted, path, 'admin', ADMIN_PASSWORD, nat)).status).toBe(200);
      });
    }

    it('delays grow per (account, address), refuse even the right password while they run, and a success clears them', async () => {
      const from = 'guesser';
      for (let i = 0; i < 5; i++)
        expect((await attempt(booted, 'login', 'carol', `guess-${i}`, from)).status).toBe(401);
      const locked = await attempt(booted, 'login', 'carol', 'carol-password', from);
      expect(locked).toEqual({ status: 429, retryAfter: 1 });
      // The lock says nothing about the password: a right one is refused like a wrong one.
      expect((await attempt(booted, 'basic', 'carol', `guess-x`, from)).status).toBe(429);
      skew += 1_100;
      expect((await attempt(booted, 'login', 'carol', 'guess-5', from)).status).toBe(401);
      const longer = await attempt(booted, 'login', 'carol', 'guess-6', from);
      expect(longer).toEqual({ status: 429, retryAfter: 2 });
      skew += 2_100;
      expect((await attempt(booted, 'login', 'carol', 'carol-password', from)).status).toBe(200);
      expect((await attempt(booted, 'login', 'carol', 'guess-7', from)).status).toBe(401); // counting starts again
    });

    it('the delay stops growing at the maximum and the memory of failures ends after a quiet hour', async () => {
      const from = 'patient-guesser';
      // 5 free failures, then waits of 1, 2, 4, ... 512 s: the 16th failure would earn 1024 s, above the maximum.
      let failures = 0;
      for (let i = 0; failures < 16; i++) {
        expect(i).toBeLessThan(40);
        const { status, retryAfter } = await attempt(booted, 'login', 'dave', `guess-${i}`, from);
        if (status === 401) failures += 1;
        else {
          expect(status).toBe(429);
          expect(retryAfter).toBeLessThanOrEqual(900);
          skew += retryAfter! * 1000 + 10;
        }
      }
      const capped = await attempt(booted, 'login', 'dave', 'guess-x', from);
      expect(capped.status).toBe(429);
      expect(capped.retryAfter).toBeGreaterThan(850);
      expect(capped.retryAfter).toBeLessThanOrEqual(900);
      skew += 3_601_000;
      expect((await attempt(booted, 'login', 'dave', 'dave-password', from)).status).toBe(200);
    });

    it('an address past its budget may still sign in accounts it has not failed, one guess each, and nothing else', async () => {
      const from = 'sprayer';
      for (let i = 0; i < ADDRESS_BUDGET; i++)
        expect((await attempt(booted, 'token', `sprayed-${i}`, 'Winter2026!', from)).status).toBe(401);
      // Past the budget: an account this address has not failed is still checked once...
      expect((await attempt(booted, 'token', 'sprayed-new', 'Winter2026!', from)).status).toBe(401);
      // ...and an account it has failed is refused without a check, even one failure in.
      const refused = await attempt(booted, 'token', 'sprayed-new', 'Spring2026!', from);
      expect(refused.status).toBe(429);
      expect(refused.retryAfter).toBeGreaterThan(60);
      expect((await attempt(booted, 'login', 'sprayed-3', 'anything', from)).status).toBe(429);
      // A colleague behind the same address with the right password is let in; so is anyone elsewhere.
      expect((await attempt(booted, 'basic', 'erin', 'erin-password', from)).status).toBe(200);
      expect((await attempt(booted, 'basic', 'sprayed-3', 'anything', 'elsewhere')).status).toBe(401);
      // The budget is counted per window: after it, the address starts afresh.
      skew += 3_601_000;
      expect((await attempt(booted, 'token', 'sprayed-new', 'Summer2026!', from)).status).toBe(401);
      expect((await attempt(booted, 'token', 'sprayed-new', 'Autumn2026!', from)).status).toBe(401);
    });

    it('concurrent distinct guesses for one account from one address get no more checks than the free failures', async () => {
      const trials = 5;
      let overRun = 0;
      for (let t = 0; t < trials; t++) {
        const from = `burst-${t}`;
        const statuses = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            attempt(booted, 'basic', 'frank', `guess-${i}`, from).then((r) => r.status),
          ),
        );
        const checked = statuses.filter((s) => s === 401).length;
        expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
        if (checked > 5) overRun += 1;
      }
      expect(overRun).toBe(0);
    });

    it('concurrent requests with the right password from one address all pass', async () => {
      await createAccount(booted, 'integration');
      const statuses = await Promise.all(
        Array.from({ length: 20 }, () =>
          attempt(booted, 'basic', 'integration', 'integration-password', 'integration-host').then((r) => r.status),
        ),
      );
      expect(statuses).toEqual(Array(20).fill(200));
    });

    it('stores one row per failing (account, address) and per address, deletes the pair on success and prunes old rows', async () => {
      const db = booted.services.ctx.db;
      const rows = () =>
        db.selectFrom('login_throttle').selectAll().where('address', '=', 'row-check').orderBy('subject').execute();
      await attempt(booted, 'login', 'alice', 'wrong', 'row-check');
      await attempt(booted, 'login', 'alice', 'wrong-again', 'row-check');
      expect((await rows()).map((r) => [r.subject, r.failures])).toEqual([
        ['*', 2],
        ['account:alice', 2],
      ]);
      await attempt(booted, 'login', 'alice', 'alice-password', 'row-check');
      expect((await rows()).map((r) => [r.subject, r.failures])).toEqual([['*', 2]]);
      skew += 2 * 3_600_000;
      await attempt(booted, 'login', 'alice', 'wrong', 'row-check-later');
      expect(await rows()).toEqual([]);
      const stale = await db
        .selectFrom('login_throttle')
        .select('address')
        .where('expires_at', '<', new Date(Date.now() + skew))
        .execute();
      expect(stale).toEqual([]);
    });
  });
}

/** Two service processes on one PostgreSQL database keep one throttle. */
describe.skipIf(!process.env.DATABASE_URL)('login throttle shared across processes (PostgreSQL)', () => {
  let a: Booted2;
  let b: Booted;
  beforeAll(async () => {
    a = await bootForTest('postgres', NO_SIDECAR_ENV, { clientAddress: addressOf });
    b = await boot({
      config: a.config,
      runtime: 'test',
      hostname: 'second-node',
      logger: createLogger('silent'),
      clientAddress: addressOf,
    });
    await createAccount(a, 'shared');
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('failures on one node lock the pair on the other, and a success on the other clears it', async () => {
    for (let i = 0; i < 5; i++)
      expect((await attempt(i % 2 ? a : b, 'login', 'shared', `guess-${i}`, 'roamer')).status).toBe(401);
    expect((await attempt(b, 'login', 'shared', 'guess-5', 'roamer')).status).toBe(429);
    expect((await attempt(a, 'basic', 'shared', 'guess-5', 'roamer')).status).toBe(429);
    // Another address is untouched on both nodes.
    expect((await attempt(a, 'login', 'shared', 'shared-password', 'home')).status).toBe(200);
    expect((await attempt(b, 'login', 'shared', 'shared-password', 'home')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await attempt(b, 'login', 'shared', 'shared-password', 'roamer')).status).toBe(200);
    const rows = await a.services.ctx.db
      .selectFrom('login_throttle')
      .select('subject')
      .where('address', '=', 'roamer')
      .execute();
    expect(rows.map((r) => r.subject)).toEqual(['*']);
  });

  it('the address budget is counted across nodes', async () => {
    const budget = a.config.BIMS_LOGIN_ADDRESS_FAILURES;
    for (let i = 0; i < budget; i++) await attempt(i % 2 ? a : b, 'login', `spray-${i}`, 'guess', 'shared-sprayer');
    expect((await attempt(a, 'login', 'spray-0', 'guess-2', 'shared-sprayer')).status).toBe(429);
    expect((await attempt(b, 'login', 'spray-1', 'guess-2', 'shared-sprayer')).status).toBe(429);
  });
});
