import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootForTest, serviceDialects } from '../support/databases.js';

/**
 * Verified access tokens are remembered by their hash until they expire (src/services/auth/verified-tokens.ts).
 * A remembered token must still fail the moment it expires, the moment its signing key is retired, and the
 * moment its account is disabled; a token altered by one character is never taken for the one remembered.
 */
for (const dialect of serviceDialects) {
  describe(`remembered tokens on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    let skew = 0;
    // While set, the service's clock stands still at this instant (plus skew), so a loaded machine's slow
    // requests cannot move a token nearer its expiry than the test says.
    let frozenAt: number | undefined;
    beforeAll(async () => {
      booted = await bootForTest(
        dialect,
        { BIMS_ACCESS_TOKEN_SECONDS: '60' },
        { now: () => new Date((frozenAt ?? Date.now()) + skew) },
      );
    });
    afterAll(async () => {
      await booted?.close();
    });
    const status = async (token: string) => {
      const res = await booted.app.request('/admin/accounts/count', { headers: { authorization: `Bearer ${token}` } });
      await res.arrayBuffer();
      return res.status;
    };
    const adminToken = () =>
      booted.services.auth.accessToken({ accountId: 1, username: 'admin', credentialVersion: 1 }, 'ADMIN', 'bims-docs');

    it('a remembered token fails once it expires', async () => {
      frozenAt = Date.now();
      const token = await adminToken();
      expect([await status(token), await status(token)]).toEqual([200, 200]);
      skew += 59_000;
      expect(await status(token)).toBe(200);
      skew += 2_000;
      expect(await status(token)).toBe(401);
      skew = 0;
      frozenAt = undefined;
    });

    it('a token differing by one character from a remembered one is refused', async () => {
      const token = await adminToken();
      expect(await status(token)).toBe(200);
      const [header, payload, signature] = token.split('.');
      const flipped = signature!.slice(0, 10) + (signature![10] === 'A' ? 'B' : 'A') + signature!.slice(11);
      expect(await status(`${header}.${payload}.${flipped}`)).toBe(401);
      expect(await status(`${token}x`)).toBe(401);
    });

    it('a remembered token fails once its key is retired', async () => {
      const token = await adminToken();
      expect([await status(token), await status(token)]).toEqual([200, 200]);
      const kid = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).kid as string;
      await booted.services.auth.keys.retire(kid);
      expect(await status(token)).toBe(401);
    });
  });
}
