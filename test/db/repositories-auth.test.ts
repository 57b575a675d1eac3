// The authentication repositories over both dialects: jsonb columns (client lists, JWKs) come back as
// values, not text, and timestamps as Dates; the single-winner updates (a code used, a refresh token replaced)
// let exactly one of two concurrent callers win; the login throttle's upsert counts, restarts an expired row
// and keeps the address's window fixed.
import {
  deleteRevokedAccessTokensExpiredBefore,
  insertRevokedAccessToken,
} from '../../src/db/repositories/auth/revoked-tokens.js';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/tables.js';
import { insertAccountUnlessNameTaken } from '../../src/db/repositories/accounts.js';
import {
  deleteOauthClient,
  findOauthClient,
  findTokenClient,
  insertOauthClient,
  listOauthClients,
  upsertOauthClient,
} from '../../src/db/repositories/auth/oauth-clients.js';
import {
  findAuthorizationCode,
  insertAuthorizationCode,
  markAuthorizationCodeUsed,
} from '../../src/db/repositories/auth/authorization-codes.js';
import {
  familyHasRevokedToken,
  findRefreshToken,
  insertRefreshToken,
  markRefreshTokenReplaced,
  revokeFamilyRefreshTokens,
} from '../../src/db/repositories/auth/refresh-tokens.js';
import { insertSigningKey, listSigningKeys, retireSigningKey } from '../../src/db/repositories/auth/signing-keys.js';
import { countThrottleFailures, findThrottleRows } from '../../src/db/repositories/auth/login-throttle.js';
import { dialects } from '../support/databases.js';
import { openMigratedDatabase } from '../support/migrated-database.js';

const t0 = new Date('2026-05-06T07:08:09.123Z');
const later = (ms: number) => new Date(t0.getTime() + ms);

for (const dialect of dialects) {
  describe(`auth repositories on ${dialect}`, () => {
    let db: Kysely<Database>;
    let close: () => Promise<void>;
    let accountId: number;
    beforeAll(async () => {
      ({ db, close } = await openMigratedDatabase(dialect));
      const account = await insertAccountUnlessNameTaken(db, {
        username: 'alice',
        password_hash: 'x',
        role: 'USER',
        created_at: t0,
        updated_at: t0,
      });
      accountId = account!.id;
    }, 120_000);
    afterAll(async () => close?.());

    it('gives a client its redirect URIs and grant types as arrays, its creation time as a Date, oldest first', async () => {
      const base = { secret_hash: null, role: 'ADMIN' as const };
      const inserted = await insertOauthClient(db, {
        ...base,
        client_id: 'b',
        name: 'B',
        redirect_uris: ['http://127.0.0.1/cb'],
        grant_types: ['authorization_code'],
        created_at: t0,
      });
      expect(inserted.redirect_uris).toEqual(['http://127.0.0.1/cb']);
      await insertOauthClient(db, {
        ...base,
        client_id: 'a',
        name: 'A',
        redirect_uris: [],
        grant_types: ['client_credentials'],
        created_at: t0,
      });
      await insertOauthClient(db, {
        ...base,
        client_id: 'c',
        name: 'C',
        redirect_uris: [],
        grant_types: [],
        created_at: later(-1000),
      });
      const found = await findOauthClient(db, 'b');
      expect(found?.redirect_uris).toEqual(['http://127.0.0.1/cb']);
      expect(found?.grant_types).toEqual(['authorization_code']);
      expect(found?.created_at).toBeInstanceOf(Date);
      expect(found?.created_at.toISOString()).toBe(t0.toISOString());
      expect((await listOauthClients(db)).map((c) => c.client_id)).toEqual(['c', 'a', 'b']);
      expect(await findTokenClient(db, 'a', 'some-jti')).toEqual({ client_id: 'a', role: 'ADMIN', revoked: false });
      await insertRevokedAccessToken(db, 'some-jti', later(60_000));
      await insertRevokedAccessToken(db, 'some-jti', later(60_000)); // a second revocation changes nothing
      expect(await findTokenClient(db, 'a', 'some-jti')).toEqual({ client_id: 'a', role: 'ADMIN', revoked: true });
      expect(await findTokenClient(db, 'a', 'another-jti')).toMatchObject({ revoked: false });
      await deleteRevokedAccessTokensExpiredBefore(db, later(120_000));
      expect(await findTokenClient(db, 'a', 'some-jti')).toMatchObject({ revoked: false });
      expect(await findTokenClient(db, 'nobody', null)).toBeUndefined();
    });

    it('upserts a built-in client: its definition is replaced, its creation time kept', async () => {
      const builtin = {
        client_id: 'builtin',
        name: 'one',
        secret_hash: null,
        redirect_uris: ['http://a/'],
        grant_types: ['refresh_token'],
        role: 'ADMIN' as const,
      };
      await upsertOauthClient(db, { ...builtin, created_at: t0 });
      await upsertOauthClient(db, {
        ...builtin,
        name: 'two',
        redirect_uris: ['http://b/', 'http://c/'],
        created_at: later(5000),
      });
      const row = await findOauthClient(db, 'builtin');
      expect(row).toMatchObject({ name: 'two', redirect_uris: ['http://b/', 'http://c/'] });
      expect(row?.created_at.toISOString()).toBe(t0.toISOString());
      expect(await deleteOauthClient(db, 'builtin')).toBe(true);
      expect(await deleteOauthClient(db, 'builtin')).toBe(false);
    });

    it('lets exactly one of two concurrent redemptions mark a code used', async () => {
      await insertAuthorizationCode(db, {
        code_hash: 'code-1',
        client_id: 'a',
        account_id: accountId,
        redirect_uri: 'http://x/',
        code_challenge: 'c',
        scope: 'USER',
        expires_at: later(60_000),
      });
      const fresh = await findAuthorizationCode(db, 'code-1');
      expect(fresh?.expires_at).toBeInstanceOf(Date);
      expect(fresh?.used_at).toBeNull();
      const wins = await Promise.all([
        markAuthorizationCodeUsed(db, 'code-1', later(1)),
        markAuthorizationCodeUsed(db, 'code-1', later(2)),
      ]);
      expect(wins.filter(Boolean)).toHaveLength(1);
      expect((await findAuthorizationCode(db, 'code-1'))?.used_at).toBeInstanceOf(Date);
    });

    it('replaces a refresh token once, never a revoked one, and sees a family revoked by any of its rows', async () => {
      const token = (hash: string) => ({
        token_hash: hash,
        family_id: 'fam',
        account_id: accountId,
        client_id: 'a',
        scope: 'USER',
        expires_at: later(3600_000),
        created_at: t0,
      });
      await insertRefreshToken(db, token('r1'));
      await insertRefreshToken(db, token('r2'));
      const wins = await Promise.all([
        markRefreshTokenReplaced(db, 'r1', later(1)),
        markRefreshTokenReplaced(db, 'r1', later(2)),
      ]);
      expect(wins.filter(Boolean)).toHaveLength(1);
      const replaced = await findRefreshToken(db, 'r1');
      expect(replaced?.replaced_at).toBeInstanceOf(Date);
      expect(replaced?.created_at.toISOString()).toBe(t0.toISOString());
      expect(await familyHasRevokedToken(db, 'fam')).toBe(false);
      await revokeFamilyRefreshTokens(db, 'fam', later(10));
      expect(await familyHasRevokedToken(db, 'fam')).toBe(true);
      expect(await markRefreshTokenReplaced(db, 'r2', later(20))).toBe(false);
      expect((await findRefreshToken(db, 'r2'))?.revoked_at?.toISOString()).toBe(later(10).toISOString());
    });

    it('gives signing keys their JWKs as objects and their retirement as a Date', async () => {
      const jwk = { kty: 'EC', crv: 'P-256', x: 'xx', y: 'yy' };
      await insertSigningKey(db, {
        kid: 'k2',
        alg: 'ES256',
        private_jwk: { ...jwk, d: 'dd' },
        public_jwk: jwk,
        created_at: later(1000),
      });
      await insertSigningKey(db, {
        kid: 'k1',
        alg: 'ES256',
        private_jwk: { ...jwk, d: 'dd' },
        public_jwk: jwk,
        created_at: t0,
      });
      await retireSigningKey(db, 'k1', later(2000));
      const keys = await listSigningKeys(db);
      expect(keys.map((k) => k.kid)).toEqual(['k1', 'k2']);
      expect(keys[1]!.public_jwk).toEqual(jwk);
      expect(keys[1]!.private_jwk).toEqual({ ...jwk, d: 'dd' });
      expect(keys[0]!.retired_at?.toISOString()).toBe(later(2000).toISOString());
      expect(keys[1]!.retired_at).toBeNull();
      expect(keys[1]!.created_at).toBeInstanceOf(Date);
    });

    it('counts throttle failures: a sliding row, a fixed window for the total, an expired row starting again at 1', async () => {
      const fail = (at: Date) =>
        countThrottleFailures(
          db,
          '10.0.0.1',
          at,
          [
            { subject: 'alice', expiresAt: new Date(at.getTime() + 1000) },
            { subject: '*', expiresAt: new Date(at.getTime() + 5000) },
          ],
          '*',
        );
      await fail(t0);
      await fail(later(500));
      const bySubject = async () =>
        Object.fromEntries((await findThrottleRows(db, '10.0.0.1', ['alice', '*'])).map((r) => [r.subject, r]));
      let rows = await bySubject();
      expect(rows.alice).toMatchObject({ failures: 2 });
      expect(rows.alice!.expires_at.toISOString()).toBe(later(1500).toISOString());
      expect(rows.alice!.last_failure_at).toBeInstanceOf(Date);
      expect(rows['*']).toMatchObject({ failures: 2 });
      expect(rows['*']!.expires_at.toISOString()).toBe(later(5000).toISOString());
      await fail(later(2000)); // alice's row has expired; the address's window has not
      rows = await bySubject();
      expect(rows.alice!.failures).toBe(1);
      expect(rows['*']!.failures).toBe(3);
      expect(rows['*']!.expires_at.toISOString()).toBe(later(5000).toISOString());
    });
  });
}
