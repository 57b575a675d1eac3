import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { adminAuth, bootForTest } from '../support/databases.js';
import { attempt, PATHS } from '../support/login-paths.js';

/**
 * No account oracle (issue 32, point 4): a password check costs one key derivation of the configured strength
 * whether the user name names an enabled account, a disabled one, or none at all, on every way to present a
 * password. The time it takes is compared in `npm run bench -- login-timing`; this counts the derivations.
 */
describe('a password check derives a key for every user name', () => {
  const ITERATIONS = 10_000;
  let booted: Awaited<ReturnType<typeof bootForTest>>;
  let derivations: number[] = [];
  let address = 0;

  beforeAll(async () => {
    booted = await bootForTest(
      'pglite',
      { BIMS_PASSWORD_ITERATIONS: String(ITERATIONS) },
      { clientAddress: (request) => request.headers.get('x-test-address') ?? 'unknown' },
    );
    for (const [username, enabled] of [
      ['known', true],
      ['disabled', false],
    ] as const) {
      const res = await booted.app.request('/admin/accounts/create', {
        method: 'POST',
        headers: { authorization: adminAuth, 'content-type': 'application/json' },
        body: JSON.stringify({ username, password: `${username}-password`, role: 'USER', enabled }),
      });
      expect(res.status).toBe(201);
    }
    const derive = crypto.subtle.deriveBits.bind(crypto.subtle);
    vi.spyOn(crypto.subtle, 'deriveBits').mockImplementation((algorithm, key, length) => {
      derivations.push((algorithm as Pbkdf2Params).iterations);
      return derive(algorithm, key, length);
    });
  });
  afterEach(() => {
    derivations = [];
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await booted?.close();
  });

  for (const path of PATHS) {
    for (const [who, username] of [
      ['a known user with a wrong password', 'known'],
      ['a disabled user', 'disabled'],
      ['an unknown user name', 'nobody-by-that-name'],
    ] as const) {
      it(`${path}: ${who} is refused after one derivation of ${ITERATIONS} iterations`, async () => {
        // Each attempt from its own address: the throttle never answers before the check.
        const { status } = await attempt(booted, path, username, 'a-wrong-password', `address-${++address}`);
        expect(status).toBe(401);
        expect(derivations).toEqual([ITERATIONS]);
      });
    }
  }
});
