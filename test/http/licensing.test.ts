import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/services/errors.js';
import { countUsage } from '../../src/services/licensing/usage.js';
import { photo } from '../biometrics/helpers.js';
import { adminAuth, bootForTest, dialects } from '../support/databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { licence, vendor } from '../support/licensing.js';

/**
 * Licensing on the service side: unlicensed mode said out loud, INTERNET licences verified and activated,
 * quotas enforced in the operation's transaction under concurrency, and refusals (expired, not yet valid,
 * bad signature) before any extraction work. The dongle round trips are in licensing-dongle.test.ts.
 */
type Booted = Awaited<ReturnType<typeof bootForTest>>;

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const DAY = 86_400_000;

async function call(booted: Booted, method: 'GET' | 'POST', path: string, body?: unknown) {
  const res = await booted.app.request(path, {
    method,
    headers: { authorization: adminAuth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: (await res.json()) as any };
}

/** One transaction that counts `type` and holds its row a moment, as a real operation's would. */
function countIn(booted: Booted, type: 'VERIFY' | 'CHECK') {
  return booted.services.ctx.db.transaction().execute(async (trx) => {
    await countUsage(trx, booted.services, type);
    await new Promise((resolve) => setTimeout(resolve, 20));
  });
}

afterAll(async () => {
  await closeSharedExtractor();
});

// PostgreSQL too (dialects, not serviceDialects): transactions counting usage at once race for the quota, and
// interleave only on a pool of connections (PGlite's one connection runs them in turn).
for (const dialect of dialects) {
  describe(`unlicensed mode on ${dialect}`, () => {
    let booted: Booted;
    beforeAll(async () => {
      booted = await bootForTest(dialect);
    });
    afterAll(async () => booted?.close());

    it('says UNLICENSED in every licensing answer and in management info, and counts without limit', async () => {
      for (const path of [
        '/admin/licensing/cloud',
        '/licensing/internet',
        '/admin/licensing/token',
        '/admin/licensing/usage',
      ]) {
        const { status, json } = await call(booted, 'GET', path);
        expect(status, path).toBe(200);
        expect(json.licensing, path).toMatchObject({
          mode: 'UNLICENSED',
          state: 'UNLICENSED',
          message: expect.stringContaining('BIMS_LICENCE_PUBLIC_KEY'),
        });
      }
      expect((await call(booted, 'GET', '/admin/licensing/token')).json.token).toBeUndefined();
      const info = await call(booted, 'GET', '/admin/management/info');
      expect(info.json.licence).toMatchObject({ mode: 'UNLICENSED', state: 'UNLICENSED' });
      await Promise.all(Array.from({ length: 7 }, () => countIn(booted, 'VERIFY')));
      const usage = await call(booted, 'GET', '/admin/licensing/usage?period=MONTH');
      expect(usage.json.entries).toEqual([
        { operation: 'VERIFY', periodStart: expect.stringMatching(/-01T00:00:00.000Z$/), count: 7 },
      ]);
      expect(usage.json.totals).toEqual([{ operation: 'VERIFY', count: 7 }]);
    });
  });

  describe(`an INTERNET licence with quotas on ${dialect}`, () => {
    let booted: Booted;
    let keys: Awaited<ReturnType<typeof vendor>>;
    let jws: string;
    const licenceId = `LIC-Q-${dialect.toUpperCase()}`;
    beforeAll(async () => {
      keys = await vendor();
      jws = await licence(keys, {
        licenceId,
        quotas: { CHECK: { period: 'DAY', limit: 5 }, VERIFY: { period: 'TOTAL', limit: 5 } },
      });
      booted = await bootForTest(
        dialect,
        { ...keys.env, BIMS_LICENCE: jws },
        { createExtractor: sharedExtractorFactory() },
      );
    });
    afterAll(async () => booted?.close());

    it('activates the licence once and reports it from every angle', async () => {
      const internet = await call(booted, 'GET', '/admin/licensing/internet');
      expect(internet.json).toMatchObject({
        activated: true,
        state: 'VALID',
        licenseId: licenceId,
        licensee: 'Acme Test',
        modalities: ['FACE'],
        licensing: { mode: 'LICENSED', source: 'INTERNET', state: 'VALID', licenseId: licenceId },
      });
      expect(internet.json.quotas).toEqual(
        expect.arrayContaining([
          { operation: 'CHECK', period: 'DAY', limit: 5 },
          { operation: 'VERIFY', period: 'TOTAL', limit: 5 },
        ]),
      );
      const stored = await booted.services.ctx.db.selectFrom('licences').selectAll().execute();
      expect(stored).toEqual([
        expect.objectContaining({ id: licenceId, source: 'INTERNET', document: jws, active: true }),
      ]);
      expect((await call(booted, 'GET', '/licensing/token')).json).toMatchObject({ token: jws, source: 'INTERNET' });
      expect((await call(booted, 'GET', '/admin/licensing/cloud')).json).toMatchObject({
        configured: false,
        state: 'MISSING',
        licensing: { mode: 'LICENSED' },
      });
      expect((await call(booted, 'GET', '/admin/management/info')).json.licence).toMatchObject({
        mode: 'LICENSED',
        state: 'VALID',
        licenseId: licenceId,
      });
    });

    it('lets exactly the quota through when 12 transactions count at once: none lost, none over', async () => {
      const results = await Promise.allSettled(Array.from({ length: 12 }, () => countIn(booted, 'VERIFY')));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
      const refused = results
        .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
        .map((r) => r.reason as DomainError);
      expect(refused).toHaveLength(7);
      for (const error of refused) {
        expect(error).toBeInstanceOf(DomainError);
        expect(error.code).toBe('licence-exhausted');
        expect(error.detail).toContain(licenceId);
      }
      const rows = await booted.services.ctx.db
        .selectFrom('usage_counters')
        .selectAll()
        .where('operation_type', '=', 'VERIFY')
        .orderBy('period')
        .execute();
      expect(rows.map((r) => [r.period.split(':')[0], r.count, r.licence_id])).toEqual([
        ['DAY', 5, licenceId],
        ['MONTH', 5, licenceId],
        ['TOTAL', 5, licenceId],
      ]);
    });

    it('refuses CHECK operations over the daily quota with 402 naming the licence, under concurrent requests', async () => {
      const image = b64(photo('labelled/franck/franck_01829.jpg'));
      const answers = await Promise.all(
        Array.from({ length: 12 }, () =>
          call(booted, 'POST', '/admin/operations/create', { type: 'CHECK', faces: [{ image }] }),
        ),
      );
      expect(answers.filter((a) => a.status === 201)).toHaveLength(5);
      const refused = answers.filter((a) => a.status !== 201);
      expect(refused).toHaveLength(7);
      for (const { status, json } of refused) {
        expect(status).toBe(402);
        expect(json).toMatchObject({
          type: 'https://bims.dev/problems/licence-exhausted',
          licenceId,
          operationType: 'CHECK',
          limit: 5,
          period: 'DAY',
        });
        expect(json.detail).toContain(licenceId);
      }
      const recorded = await booted.services.ctx.db
        .selectFrom('operations')
        .select('uuid')
        .where('type', '=', 'CHECK')
        .execute();
      expect(recorded).toHaveLength(5);
      const usage = await call(booted, 'GET', '/admin/licensing/usage?operation=CHECK');
      expect(usage.json).toMatchObject({
        period: 'DAY',
        entries: [{ operation: 'CHECK', count: 5, limit: 5 }],
        totals: [{ operation: 'CHECK', count: 5 }],
      });
      // The cheap pre-check also refuses now, before any extraction.
      expect(
        (await call(booted, 'POST', '/admin/operations/create', { type: 'CHECK', faces: [{ image: 'AAAA' }] })).status,
      ).toBe(402);
    });
  });
}

describe('licences that are not in force refuse before extraction work', () => {
  const boots: Booted[] = [];
  afterAll(async () => {
    for (const b of boots) await b.close();
  });
  // No extractor is configured: reaching extraction would answer 503, so a 403 proves the pre-check.
  async function bootWith(env: Record<string, string>) {
    const booted = await bootForTest('pglite', env);
    boots.push(booted);
    return booted;
  }
  const attempts = [
    ['/admin/operations/create', { type: 'CHECK', faces: [{ image: 'AAAA' }] }],
    ['/admin/operations/create', { type: 'IDENTIFY', faces: [{ image: 'AAAA' }] }],
    ['/admin/subjects/create', { subjectId: 'someone', faces: [{ image: 'AAAA' }] }],
  ] as const;

  it('expired: 403 licence-expired naming the licence, and countUsage refuses inside a transaction too', async () => {
    const keys = await vendor();
    const jws = await licence(keys, {
      licenceId: 'LIC-OLD',
      notBefore: new Date(Date.now() - 60 * DAY).toISOString(),
      expiresAt: new Date(Date.now() - DAY).toISOString(),
    });
    const booted = await bootWith({ ...keys.env, BIMS_LICENCE: jws });
    for (const [path, body] of attempts) {
      const { status, json } = await call(booted, 'POST', path, body);
      expect(status, path).toBe(403);
      expect(json).toMatchObject({
        type: 'https://bims.dev/problems/licence-expired',
        licenceId: 'LIC-OLD',
        licenceState: 'EXPIRED',
      });
      expect(json.detail).toMatch(/LIC-OLD.*expired/);
    }
    await expect(countIn(booted, 'CHECK')).rejects.toMatchObject({ code: 'licence-expired' });
    expect(await booted.services.ctx.db.selectFrom('usage_counters').selectAll().execute()).toEqual([]);
    expect((await call(booted, 'GET', '/admin/licensing/internet')).json).toMatchObject({
      state: 'EXPIRED',
      activated: true,
      licensing: { state: 'EXPIRED' },
    });
  });

  it('not yet valid: 403 licence-expired with the state NOT_YET_VALID', async () => {
    const keys = await vendor();
    const booted = await bootWith({
      ...keys.env,
      BIMS_LICENCE: await licence(keys, { licenceId: 'LIC-SOON', notBefore: new Date(Date.now() + DAY).toISOString() }),
    });
    const { status, json } = await call(booted, 'POST', ...attempts[0]);
    expect(status).toBe(403);
    expect(json).toMatchObject({ licenceId: 'LIC-SOON', licenceState: 'NOT_YET_VALID' });
  });

  it('signed with a foreign key: 403 licence-invalid, reported as INVALID_SIGNATURE, never activated', async () => {
    const [keys, stranger] = [await vendor(), await vendor()];
    const booted = await bootWith({ ...keys.env, BIMS_LICENCE: await licence(stranger) });
    for (const [path, body] of attempts) {
      const { status, json } = await call(booted, 'POST', path, body);
      expect(status, path).toBe(403);
      expect(json).toMatchObject({
        type: 'https://bims.dev/problems/licence-invalid',
        licenceState: 'INVALID_SIGNATURE',
      });
    }
    expect((await call(booted, 'GET', '/admin/licensing/internet')).json).toMatchObject({
      activated: false,
      state: 'INVALID_SIGNATURE',
    });
    expect(await booted.services.ctx.db.selectFrom('licences').selectAll().execute()).toEqual([]);
  });

  it('a licence without the FACE modality refuses face operations with 403 naming the modality', async () => {
    const keys = await vendor();
    const booted = await bootWith({
      ...keys.env,
      BIMS_LICENCE: await licence(keys, { licenceId: 'LIC-VOICE', modalities: ['VOICE'] }),
    });
    for (const [path, body] of attempts) {
      const { status, json } = await call(booted, 'POST', path, body);
      expect(status, path).toBe(403);
      expect(json).toMatchObject({
        type: 'https://bims.dev/problems/licence-invalid',
        licenceId: 'LIC-VOICE',
        modalities: ['FACE'],
      });
    }
  });

  it('a key but no licence at all: 403 licence-invalid, state MISSING', async () => {
    const keys = await vendor();
    const booted = await bootWith({ ...keys.env, BIMS_LICENCE_SOURCE: 'INTERNET' });
    const { status, json } = await call(booted, 'POST', ...attempts[0]);
    expect(status).toBe(403);
    expect(json).toMatchObject({ type: 'https://bims.dev/problems/licence-invalid', licenceState: 'MISSING' });
  });
});

describe('a CLOUD licence', () => {
  let booted: Booted;
  let server: Server;
  let jws: string;
  const token = 'cloud-token-for-tests';
  beforeAll(async () => {
    const keys = await vendor();
    jws = await licence(keys, { licenceId: 'LIC-CLOUD', source: 'CLOUD' });
    server = createServer((req, res) => {
      if (req.headers.authorization !== `Bearer ${token}`) return void res.writeHead(401).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ licence: jws }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/licence?tenant=acme`;
    booted = await bootForTest('pglite', { ...keys.env, BIMS_LICENCE_CLOUD_URL: url, BIMS_LICENCE_CLOUD_TOKEN: token });
  });
  afterAll(async () => {
    await booted?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('is fetched with the token, reported with its endpoint (no query, no token), and kept for when the endpoint is down', async () => {
    const cloud = await call(booted, 'GET', '/admin/licensing/cloud');
    expect(cloud.json).toMatchObject({
      configured: true,
      state: 'VALID',
      licenseId: 'LIC-CLOUD',
      endpoint: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/licence$/),
      lastFetchedAt: expect.any(String),
      nextRefreshAt: expect.any(String),
      licensing: { source: 'CLOUD', state: 'VALID' },
    });
    expect(JSON.stringify(cloud.json)).not.toContain(token);
    expect((await call(booted, 'GET', '/admin/licensing/token')).json).toMatchObject({ token: jws, source: 'CLOUD' });
    expect((await call(booted, 'GET', '/admin/licensing/internet')).json).toMatchObject({
      activated: false,
      state: 'MISSING',
    });
    // The endpoint goes away: the last good licence stays in force, and the answer says the endpoint is unreachable.
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    booted.services.licensing.invalidate();
    const stale = await call(booted, 'GET', '/admin/licensing/cloud');
    expect(stale.json).toMatchObject({
      state: 'VALID',
      licenseId: 'LIC-CLOUD',
      licensing: { message: expect.stringContaining('cannot be reached') },
    });
  });
});
