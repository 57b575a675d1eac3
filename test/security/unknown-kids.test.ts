import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, generateKeyPair } from 'jose';
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import { bootForTest, serviceDialects } from '../support/databases.js';
import { NO_SIDECAR_ENV } from '../support/external-ops.js';
import { SigningKeys } from '../../src/services/auth/signing-keys.js';
import { randomSecret } from '../../src/auth/password.js';

/**
 * Bearer tokens naming a key id the service does not know must not make every request re-read the signing
 * keys from the database: unknown ids are remembered for a while and reloads are rate-limited (one per
 * second, shared by the requests waiting for it). A key another node has just made is still found.
 */

/** Counts the reads of `signing_keys` made through the database it is plugged into. */
class KeyReads implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (args.node.kind === 'SelectQueryNode' && JSON.stringify(args.node.from ?? {}).includes('"signing_keys"'))
      this.count += 1;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

for (const dialect of serviceDialects) {
  describe(`unknown key ids on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    let forged: (kid: string) => Promise<string>;
    beforeAll(async () => {
      booted = await bootForTest(dialect, NO_SIDECAR_ENV);
      const { privateKey } = await generateKeyPair('ES256');
      forged = (kid) =>
        new SignJWT({ sub: 'account:1', scope: 'ADMIN' })
          .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
          .setIssuer(booted.services.auth.issuer)
          .setAudience('bims')
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(privateKey);
    });
    afterAll(async () => {
      await booted?.close();
    });

    /** A node's key set reading through an observed connection to the same database. */
    const observedNode = () => {
      const reads = new KeyReads();
      const keys = new SigningKeys({ ...booted.services.ctx, db: booted.services.ctx.db.withPlugin(reads) });
      return { reads, keys };
    };

    it('many distinct unknown kids cost at most one key read per second', async () => {
      const { reads, keys } = observedNode();
      expect(
        await keys.verify(
          await booted.services.auth.keys.sign({ sub: 'client:x', scope: 'USER' }, 60, booted.services.auth.issuer),
          booted.services.auth.issuer,
        ),
      ).not.toBeNull();
      const before = reads.count;
      const started = Date.now();
      const tokens = await Promise.all(Array.from({ length: 400 }, () => forged(randomSecret(12))));
      // Four waves of a hundred concurrent requests, each wave a little apart.
      for (let wave = 0; wave < 4; wave++) {
        const verdicts = await Promise.all(
          tokens.slice(wave * 100, wave * 100 + 100).map((t) => keys.verify(t, booted.services.auth.issuer)),
        );
        expect(verdicts.every((v) => v === null)).toBe(true);
        await new Promise((r) => setTimeout(r, 150));
      }
      const seconds = (Date.now() - started) / 1000;
      expect(reads.count - before).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
      expect(reads.count - before).toBeGreaterThanOrEqual(1);
    });

    it('an unknown kid seen again is refused from memory, without a read', async () => {
      const { reads, keys } = observedNode();
      const token = await forged(randomSecret(12));
      expect(await keys.verify(token, booted.services.auth.issuer)).toBeNull();
      const after = reads.count;
      const verdicts = await Promise.all(
        Array.from({ length: 200 }, () => keys.verify(token, booted.services.auth.issuer)),
      );
      expect(verdicts.every((v) => v === null)).toBe(true);
      expect(reads.count).toBe(after);
    });

    it('a key another node has just made is accepted, even while unknown kids keep arriving', async () => {
      const { keys } = observedNode();
      const otherNode = new SigningKeys(booted.services.ctx);
      const issuer = booted.services.auth.issuer;
      for (let trial = 0; trial < 3; trial++) {
        expect(
          await keys.verify(await otherNode.sign({ sub: 'client:x', scope: 'USER' }, 60, issuer), issuer),
        ).not.toBeNull();
        // A stream of unknown kids uses up the reload allowance just before the rotation...
        const flood = Promise.all(
          Array.from({ length: 50 }, async () => keys.verify(await forged(randomSecret(12)), issuer)),
        );
        await otherNode.rotate();
        const fresh = await otherNode.sign({ sub: 'client:x', scope: 'USER' }, 60, issuer);
        // ...and the token of the new key is still accepted, by the next reload.
        const [payload] = await Promise.all([keys.verify(fresh, issuer), flood]);
        expect(payload?.sub).toBe('client:x');
      }
    });

    it('answers 401 invalid_token over HTTP for unknown kids, and a known key keeps working', async () => {
      const statuses = await Promise.all(
        Array.from({ length: 50 }, async () => {
          const res = await booted.app.request('/admin/accounts/count', {
            headers: { authorization: `Bearer ${await forged(randomSecret(12))}` },
          });
          return `${res.status} ${/invalid_token/.test(res.headers.get('www-authenticate') ?? '')}`;
        }),
      );
      expect(new Set(statuses)).toEqual(new Set(['401 true']));
      const ok = await booted.app.request('/oauth2/token', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: 'admin',
          client_secret: 'admin-password-for-tests',
        }).toString(),
      });
      const token = (await ok.json()).access_token;
      expect(
        (await booted.app.request('/admin/accounts/count', { headers: { authorization: `Bearer ${token}` } })).status,
      ).toBe(200);
    });
  });
}
