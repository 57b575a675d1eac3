import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootForTest } from '../../../test/support/databases.js';
import { LoginThrottle, throttlePolicy, type Verdict } from './throttle.js';

/** The throttle's handling of concurrent attempts; the policy itself is tested over HTTP in test/security/login-throttle.test.ts. */
describe('LoginThrottle under concurrency', () => {
  let booted: Awaited<ReturnType<typeof bootForTest>>;
  let throttle: LoginThrottle;
  beforeAll(async () => {
    booted = await bootForTest('pglite');
    throttle = new LoginThrottle(booted.services.ctx.db, () => Date.now(), throttlePolicy(booted.config));
  });
  afterAll(async () => {
    await booted?.close();
  });

  /** A check that takes a while and counts how often it ran. */
  const slowCheck = (counter: { runs: number }, ok: boolean) => async (): Promise<Verdict<string>> => {
    counter.runs += 1;
    await new Promise((r) => setTimeout(r, 30));
    return ok ? { ok: true, value: 'in' } : { ok: false, reason: 'no' };
  };
  const settle = (attempts: Promise<Verdict<string>>[]) =>
    Promise.all(
      attempts.map((a) =>
        a.then(
          (v) => (v.ok ? 'ok' : 'failed'),
          (e: Error) => (/Too many/.test(e.message) ? 'throttled' : e.message),
        ),
      ),
    );

  it('checks the same credentials sent in parallel once, and every sender gets the verdict', async () => {
    for (const ok of [true, false]) {
      const counter = { runs: 0 };
      const outcomes = await settle(
        Array.from({ length: 25 }, () =>
          throttle.attempt('account:same', `same-${ok}`, 'hash-of-one-password', slowCheck(counter, ok)),
        ),
      );
      expect(counter.runs).toBe(1);
      expect(new Set(outcomes)).toEqual(new Set([ok ? 'ok' : 'failed']));
    }
  });

  it('lets no more distinct guesses run at once than the free failures left, over many trials', async () => {
    const free = booted.config.BIMS_LOGIN_FREE_FAILURES;
    let overRun = 0;
    for (let trial = 0; trial < 20; trial++) {
      const counter = { runs: 0 };
      const outcomes = await settle(
        Array.from({ length: 12 }, (_, i) =>
          throttle.attempt('account:target', `burst-${trial}`, `guess-${i}`, slowCheck(counter, false)),
        ),
      );
      if (counter.runs > free) overRun += 1;
      expect(outcomes.filter((o) => o === 'failed')).toHaveLength(counter.runs);
      expect(outcomes.filter((o) => o !== 'failed' && o !== 'throttled')).toEqual([]);
    }
    expect(overRun).toBe(0);
  });

  it('records nothing when the check itself breaks', async () => {
    await expect(
      throttle.attempt('account:broken', 'broken-check', 'g', async () => Promise.reject(new Error('database gone'))),
    ).rejects.toThrow('database gone');
    const rows = await booted.services.ctx.db
      .selectFrom('login_throttle')
      .selectAll()
      .where('address', '=', 'broken-check')
      .execute();
    expect(rows).toEqual([]);
  });
});
