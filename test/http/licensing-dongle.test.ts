import { compactVerify, EmbeddedJWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueUpdate } from '../../src/licensing/issue.js';
import { countUsage } from '../../src/services/licensing/usage.js';
import { SoftwareDongle } from '../../src/sidecar/dongles/software-dongle.js';
import { adminAuth, bootForTest } from '../support/databases.js';
import { licence, startLicensingSidecar, vendor, type LicensingSidecar } from '../support/licensing.js';
import { freePorts } from '../support/ports.js';

/**
 * Dongles through a real sidecar (without Janus): the software dongle offered when no hardware key is
 * present, signed dumps, signed updates (and the ones refused), the licence it holds put in force, and what
 * the API answers when the sidecar is not there.
 */
type Booted = Awaited<ReturnType<typeof bootForTest>>;

let keys: Awaited<ReturnType<typeof vendor>>;
let sidecar: LicensingSidecar;
let booted: Booted;

beforeAll(async () => {
  keys = await vendor();
  sidecar = await startLicensingSidecar(keys.env);
  booted = await bootForTest('pglite', { ...keys.env, ...sidecar.env, BIMS_LICENCE_SOURCE: 'DONGLE' });
});
afterAll(async () => {
  await booted?.close();
  await sidecar?.stop();
});

async function call(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  app = booted.app,
) {
  const res = await app.request(path, {
    method,
    headers: {
      authorization: adminAuth,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return res;
}
const json = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
  const res = await call(method, path, body);
  return { status: res.status, json: (await res.json()) as any };
};
const packet = (jws: string) => ({ data: Buffer.from(jws).toString('base64'), fileName: 'update.jws' });

async function dongleId(): Promise<string> {
  return (await json('GET', '/admin/licensing/dongles')).json.dongles[0].id;
}

describe('the software dongle', () => {
  it('is behind the sidecar token', async () => {
    expect((await fetch(`${sidecar.sidecar.url}/v1/dongles`)).status).toBe(401);
    expect(
      (await fetch(`${sidecar.sidecar.url}/v1/dongles`, { headers: { authorization: `Bearer ${sidecar.token}` } }))
        .status,
    ).toBe(200);
  });

  it('is offered when no hardware key is present, clearly marked, holding no licence yet; operations are refused', async () => {
    const { status, json: body } = await json('GET', '/admin/licensing/dongles');
    expect(status).toBe(200);
    expect(body.licensing).toMatchObject({ mode: 'LICENSED', source: 'DONGLE', state: 'MISSING' });
    expect(body.dongles).toEqual([
      expect.objectContaining({
        id: expect.stringMatching(/^SW-[0-9A-F]{12}$/),
        type: 'SOFTWARE',
        software: true,
        present: true,
        state: 'MISSING',
        counters: [],
      }),
    ]);
    const refused = await json('POST', '/admin/operations/create', { type: 'CHECK', faces: [{ image: 'AAAA' }] });
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ licenceState: 'MISSING', licenceSource: 'DONGLE' });
  });

  it('dumps itself as a signed file (octet-stream) or as PacketBytes on Accept: application/json', async () => {
    const id = await dongleId();
    const res = await call('GET', `/admin/licensing/generate-dongle-dump?dongleId=${id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('content-disposition')).toMatch(
      new RegExp(`^attachment; filename="dongle-${id}-\\d{8}T\\d{6}\\.jws"$`),
    );
    const jws = await res.text();
    // Signed by the dongle's own key, which the dump carries in its header.
    const { payload, protectedHeader } = await compactVerify(jws, EmbeddedJWK);
    expect(protectedHeader.typ).toBe('bims-dongle-dump+jws');
    expect(JSON.parse(new TextDecoder().decode(payload))).toMatchObject({
      dongle: { id, software: true },
      licence: null,
      counters: [],
      lastSequence: 0,
    });
    const asJson = await call('GET', '/licensing/generate-dongle-dump', undefined, { accept: 'application/json' });
    expect(asJson.status).toBe(200);
    const bytes = (await asJson.json()) as { data: string; fileName: string; contentType: string };
    expect(bytes.fileName).toMatch(/^dongle-SW-/);
    expect(Buffer.from(bytes.data, 'base64').toString().split('.')).toHaveLength(3);
    expect((await call('GET', '/admin/licensing/generate-dongle-dump?dongleId=SW-NOPE')).status).toBe(404);
  });

  it('applies a signed update: APPLIED, the licence is in force at once, usage counts under it and shows in the next dump', async () => {
    const id = await dongleId();
    const lic = await licence(keys, {
      licenceId: 'LIC-DONGLE-1',
      source: 'DONGLE',
      dongleId: id,
      quotas: { CHECK: { period: 'MONTH', limit: 100 } },
    });
    const update = await issueUpdate({ dongleId: id, sequence: 1, licence: lic }, keys.privateKey);
    const applied = await json('POST', '/admin/licensing/update', packet(update));
    expect(applied.status).toBe(202);
    expect(applied.json).toMatchObject({
      state: 'APPLIED',
      dongleId: id,
      sequence: 1,
      licensing: { mode: 'LICENSED', source: 'DONGLE', state: 'VALID', licenseId: 'LIC-DONGLE-1' },
    });
    expect((await json('GET', '/admin/licensing/update-status')).json).toMatchObject({
      state: 'APPLIED',
      dongleId: id,
      sequence: 1,
      finishedAt: expect.any(String),
    });
    expect((await json('GET', '/admin/licensing/dongles')).json.dongles[0]).toMatchObject({
      state: 'VALID',
      licenseId: 'LIC-DONGLE-1',
      dongleId: id,
      lastUpdateSequence: 1,
    });
    expect((await json('GET', '/admin/licensing/token')).json).toMatchObject({ token: lic, source: 'DONGLE' });

    await booted.services.ctx.db.transaction().execute((trx) => countUsage(trx, booted.services, 'CHECK'));
    const dump = await (await call('GET', '/admin/licensing/generate-dongle-dump')).text();
    const { payload } = await compactVerify(dump, EmbeddedJWK);
    const content = JSON.parse(new TextDecoder().decode(payload));
    expect(content).toMatchObject({ licence: lic, lastSequence: 1 });
    expect(content.counters).toEqual(
      expect.arrayContaining([{ operation: 'CHECK', period: expect.stringMatching(/^MONTH:/), count: 1 }]),
    );
    expect((await json('GET', '/admin/licensing/dongles')).json.dongles[0].counters).toEqual(
      expect.arrayContaining([{ operation: 'CHECK', period: expect.stringMatching(/^DAY:/), used: 1 }]),
    );
  });

  it("refuses a replayed update, an older sequence, another dongle's update and a bad signature, each with its reason", async () => {
    const id = await dongleId();
    const lic = await licence(keys, { licenceId: 'LIC-DONGLE-2', source: 'DONGLE', dongleId: id });
    const first = await issueUpdate({ dongleId: id, sequence: 2, licence: lic }, keys.privateKey);
    expect((await json('POST', '/admin/licensing/update', packet(first))).json.state).toBe('APPLIED');
    const stranger = await vendor();
    const cases: [string, string, RegExp][] = [
      ['the same package again', first, /replayed update: nonce/],
      [
        'an older sequence with a new nonce',
        await issueUpdate({ dongleId: id, sequence: 1, licence: lic }, keys.privateKey),
        /replayed update: sequence 1 is not above the last applied 2/,
      ],
      [
        "another dongle's update",
        await issueUpdate({ dongleId: 'SW-000000000000', sequence: 9, licence: lic }, keys.privateKey),
        /for dongle SW-000000000000, not this one/,
      ],
      [
        'a foreign signature',
        await issueUpdate({ dongleId: id, sequence: 9, licence: lic }, stranger.privateKey),
        /bad signature/,
      ],
      [
        'a foreign licence inside',
        await issueUpdate(
          { dongleId: id, sequence: 9, licence: await licence(stranger, { dongleId: id }) },
          keys.privateKey,
        ),
        /licence inside does not verify/,
      ],
    ];
    for (const [what, update, reason] of cases) {
      const refused = await json('POST', '/admin/licensing/update', packet(update));
      expect(refused.status, what).toBe(422);
      expect(refused.json.detail, what).toMatch(reason);
      const status = await json('GET', '/admin/licensing/update-status');
      expect(status.json, what).toMatchObject({ state: 'FAILED', reason: expect.stringMatching(reason) });
    }
    // Nothing refused changed the dongle, and it remembers across a restart of the sidecar (the file).
    const reread = await new SoftwareDongle(sidecar.dataDir).describe();
    expect(reread).toMatchObject({ id, software: true, licence: lic, lastSequence: 2, update: { state: 'FAILED' } });
    expect((await json('GET', '/admin/licensing/token')).json.token).toBe(lic);
  });
});

describe('when the sidecar is not there', () => {
  let orphan: Booted;
  let tokenless: Booted;
  beforeAll(async () => {
    const [port] = await freePorts(1);
    orphan = await bootForTest('pglite', {
      ...keys.env,
      BIMS_LICENCE_SOURCE: 'DONGLE',
      BIMS_SIDECAR_URL: `http://127.0.0.1:${port}`,
      BIMS_SIDECAR_TOKEN: 'x'.repeat(40),
    });
    tokenless = await bootForTest('pglite', {});
  });
  afterAll(async () => {
    await orphan?.close();
    await tokenless?.close();
  });

  it('answers 503 for every dongle operation, and operations under a DONGLE licence are refused with 503', async () => {
    for (const app of [orphan.app, tokenless.app]) {
      for (const [method, path, body] of [
        ['GET', '/admin/licensing/dongles'],
        ['GET', '/admin/licensing/generate-dongle-dump'],
        ['GET', '/admin/licensing/update-status'],
        ['POST', '/admin/licensing/update', packet('a.b.c')],
      ] as const) {
        const res = await call(method, path, body, {}, app);
        const problem = (await res.json()) as any;
        expect(res.status, path).toBe(503);
        expect(problem).toMatchObject({ type: 'https://bims.dev/problems/service-unavailable', component: 'sidecar' });
      }
    }
    const res = await call(
      'POST',
      '/admin/operations/create',
      { type: 'CHECK', faces: [{ image: 'AAAA' }] },
      {},
      orphan.app,
    );
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ licenceState: 'UNREACHABLE', component: 'licensing' });
    const info = await call('GET', '/admin/management/info', undefined, {}, orphan.app);
    expect(((await info.json()) as any).licence).toMatchObject({
      mode: 'LICENSED',
      source: 'DONGLE',
      state: 'UNREACHABLE',
    });
  });
});

describe('a sidecar without Janus (BIMS_JANUS=off)', () => {
  it('serves the dongles while the media gateway answers 503', async () => {
    const res = await call('POST', '/admin/gateway/create');
    expect(res.status).toBe(503);
  });
});
