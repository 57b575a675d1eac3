import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootForTest } from '../../../test/support/databases.js';
import { writeGenerationOf } from '../../db/write-generation.js';
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

/**
 * Where this process writes the throttle's table alone (PGlite), a clean standing is remembered: a pair that
 * keeps signing in with its password (a capture page's trickle poll, three times a second) costs no statement,
 * and every failure from the address is seen by the very next attempt, as without the memory.
 */
describe('LoginThrottle as the sole writer of its table', () => {
  let booted: Awaited<ReturnType<typeof bootForTest>>;
  let remembering: LoginThrottle;
  /** The same table read on every attempt: what the remembering throttle must agree with. */
  let reading: LoginThrottle;
  beforeAll(async () => {
    booted = await bootForTest('pglite');
    const policy = throttlePolicy(booted.config);
    remembering = new LoginThrottle(booted.services.ctx.db, () => Date.now(), policy, true);
    reading = new LoginThrottle(booted.services.ctx.db, () => Date.now(), policy, false);
  });
  afterAll(async () => {
    await booted?.close();
  });

  const pass = async (): Promise<Verdict<string>> => ({ ok: true, value: 'in' });
  const miss = async (): Promise<Verdict<string>> => ({ ok: false, reason: 'no' });
  const outcome = (attempt: Promise<Verdict<string>>) =>
    attempt.then(
      (v) => (v.ok ? 'ok' : 'failed'),
      (e: Error) => (/Too many/.test(e.message) ? 'throttled' : e.message),
    );

  /** Statements sent while `run` ran: the service's own background work included, hence compared, not counted. */
  const statementsOf = async (run: () => Promise<void>) => {
    const writes = writeGenerationOf(booted.services.ctx.db)!;
    const before = writes.statements;
    await run();
    return writes.statements - before;
  };
  const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('reads the standing of a clean pair once, and its failures lock it at once', async () => {
    const polls = (throttle: LoginThrottle, address: string) => async () => {
      for (let i = 0; i < 30; i++)
        expect(await outcome(throttle.attempt('account:poller', address, 'right', pass))).toBe('ok');
    };
    const read = await statementsOf(polls(reading, 'poll-reading'));
    const remembered = await statementsOf(polls(remembering, 'poll-address'));
    expect(read).toBeGreaterThanOrEqual(30);
    expect(remembered).toBeLessThan(read / 3);

    // The free failures, then the right password is refused while the delay runs, as the table says.
    const free = booted.config.BIMS_LOGIN_FREE_FAILURES;
    for (let i = 0; i < free; i++)
      expect(await outcome(remembering.attempt('account:poller', 'poll-address', `wrong-${i}`, miss))).toBe('failed');
    expect(await outcome(remembering.attempt('account:poller', 'poll-address', 'right', pass))).toBe('throttled');
    expect(await outcome(reading.attempt('account:poller', 'poll-address', 'right', pass))).toBe('throttled');
  });

  it('never lets the right password through where the table refuses it, with failures racing the polls, over many trials', async () => {
    const free = booted.config.BIMS_LOGIN_FREE_FAILURES;
    let letThrough = 0;
    let locked = 0;
    for (let trial = 0; trial < 40; trial++) {
      const address = `race-${trial}`;
      // Polls with the right password at random moments while a guesser fails the free failures one by one.
      const guesser = (async () => {
        await later(Math.random() * 10);
        for (let i = 0; i < free; i++) await outcome(remembering.attempt('account:raced', address, `guess-${i}`, miss));
      })();
      const polls = Array.from({ length: 4 }, async () => {
        await later(Math.random() * 30);
        return outcome(remembering.attempt('account:raced', address, 'right', pass));
      });
      await Promise.all([guesser, ...polls]);
      const mine = await outcome(remembering.attempt('account:raced', address, 'right', pass));
      const table = await outcome(reading.attempt('account:raced', address, 'right', pass));
      if (table === 'throttled') locked += 1;
      if (mine === 'ok' && table === 'throttled') letThrough += 1;
    }
    expect(letThrough).toBe(0);
    // Some trials did lock the pair (else the comparison above proved nothing).
    expect(locked).toBeGreaterThan(0);
  });
});
