import { CURRENT_FACE_TEMPLATE_VERSION } from '../../src/services/management/template-version.js';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json as jsonb } from '../../src/db/json.js';
import { adminAuth, basic, bootForTest, dialects } from '../support/databases.js';
import { send as request } from '../support/http.js';

const adjudicatorAuth = basic('adj', 'adj-password');
const userAuth = basic('usr', 'usr-password');

// PostgreSQL too (dialects, not serviceDialects): management info and the cluster status say what the server
// itself reports (its version, its connections in pg_stat_activity), which differs by dialect.
for (const dialect of dialects) {
  describe(`management on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    beforeAll(async () => {
      booted = await bootForTest(dialect);
    });
    afterAll(async () => {
      await booted?.close();
    });

    const send = (method: string, path: string, body?: unknown, auth: string | null = adminAuth) =>
      request(booted.app, method, path, body, auth);
    const ok = async (method: string, path: string, body?: unknown, auth: string | null = adminAuth) => {
      const res = await send(method, path, body, auth);
      expect(res.status, `${method} ${path}`).toBe(200);
      return res.json();
    };
    const problem = async (res: Response, status: number) => {
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      return res.json();
    };
    const db = () => booted.services.ctx.db;

    it('lists every known setting with its default, type and range', async () => {
      const settings = await ok('GET', '/admin/management/settings');
      const byKey = new Map(settings.map((s: { key: string }) => [s.key, s]));
      const defaults: Record<string, unknown> = {
        'matching.threshold': 48,
        'deduplication.duplicateThreshold': 72,
        'deduplication.adjudicationThreshold': 48,
        'adjudication.requiredDecisions': 1,
        'adjudication.leaseSeconds': 900,
        'quality.face.minimum': 50,
        'liveness.mode': 'NONE',
        'liveness.threshold': 50,
        'faces.allowMultiple': false,
        'identify.maxCandidates': 10,
      };
      for (const [key, value] of Object.entries(defaults)) {
        expect(byKey.get(key), key).toMatchObject({ key, value, defaultValue: value, overridden: false });
      }
      for (const key of [
        'quality.voice.minimum',
        'voice.minSpeechSeconds',
        'retention.operations.days',
        'retention.images.days',
        'checks.face.maxYaw',
        'checks.face.minEyeOpen',
      ]) {
        expect(byKey.has(key), key).toBe(true);
      }
      expect(byKey.get('liveness.mode')).toMatchObject({ type: 'enum', allowedValues: ['NONE', 'PASSIVE'] });
      expect(byKey.get('matching.threshold')).toMatchObject({ type: 'number', minimum: 0, maximum: 200 });
      expect(settings.map((s: { key: string }) => s.key)).toEqual([...byKey.keys()].sort());
      expect(await ok('GET', '/management/settings')).toEqual(settings);
    });

    it('reads one setting by exact key, 404 for an unknown key', async () => {
      expect(await ok('GET', '/admin/management/setting?key=identify.maxCandidates')).toMatchObject({
        value: 10,
        type: 'integer',
        minimum: 1,
      });
      expect((await problem(await send('GET', '/admin/management/setting?key=identify'), 404)).type).toMatch(
        /\/not-found$/,
      );
      expect((await problem(await send('GET', '/admin/management/setting'), 400)).errors[0].field).toBe('query.key');
    });

    it('saves a value, and every reader sees it at once', async () => {
      const saved = await ok('POST', '/admin/management/settings', { key: 'matching.threshold', value: 60 });
      expect(saved).toMatchObject({ key: 'matching.threshold', value: 60, defaultValue: 48, overridden: true });
      expect(new Date(saved.updatedAt).toISOString()).toBe(saved.updatedAt);
      expect(await booted.services.settings.get('matching.threshold')).toBe(60);
      expect((await ok('GET', '/admin/management/setting?key=matching.threshold')).value).toBe(60);
      const row = await db()
        .selectFrom('settings')
        .selectAll()
        .where('key', '=', 'matching.threshold')
        .executeTakeFirstOrThrow();
      expect(row.value).toBe(60);
      await ok('POST', '/management/settings', { key: 'liveness.mode', value: 'PASSIVE' });
      expect(await booted.services.settings.get('liveness.mode')).toBe('PASSIVE');
      await ok('POST', '/admin/management/settings', { key: 'faces.allowMultiple', value: true });
    });

    it('refuses unknown keys and wrong or out-of-range values with a 400 naming the key, writing nothing', async () => {
      const cases: [unknown, string, string][] = [
        [{ key: 'matching.treshold', value: 50 }, 'matching.treshold', 'body.key'],
        [{ key: 'matching.threshold', value: 'high' }, 'matching.threshold', 'body.value'],
        [{ key: 'matching.threshold', value: 500 }, 'matching.threshold', 'body.value'],
        [{ key: 'matching.threshold', value: -1 }, 'matching.threshold', 'body.value'],
        [{ key: 'identify.maxCandidates', value: 1.5 }, 'identify.maxCandidates', 'body.value'],
        [{ key: 'liveness.mode', value: 'ACTIVE' }, 'liveness.mode', 'body.value'],
        [{ key: 'faces.allowMultiple', value: 'yes' }, 'faces.allowMultiple', 'body.value'],
        [{ key: 'matching.threshold', value: { n: 50 } }, 'matching.threshold', 'body.value'],
      ];
      for (const [body, key, field] of cases) {
        const p = await problem(await send('POST', '/admin/management/settings', body), 400);
        expect(p.detail, JSON.stringify(body)).toContain(`'${key}'`);
        expect(p.key).toBe(key);
        expect(p.errors[0].field).toBe(field);
      }
      expect(
        (await problem(await send('POST', '/admin/management/settings', { key: 'matching.threshold' }), 400)).errors[0]
          .field,
      ).toBe('body.value');
      expect(
        (await problem(await send('POST', '/admin/management/settings', { key: 'a', value: 1, extra: 2 }), 400))
          .errors[0].field,
      ).toBe('body.extra');
      expect(await booted.services.settings.get('matching.threshold')).toBe(60);
      expect(
        await db().selectFrom('settings').select('key').where('key', '=', 'matching.treshold').executeTakeFirst(),
      ).toBeUndefined();
    });

    it('keeps paired thresholds in order', async () => {
      const p = await problem(
        await send('POST', '/admin/management/settings', { key: 'deduplication.adjudicationThreshold', value: 80 }),
        400,
      );
      expect(p.key).toBe('deduplication.adjudicationThreshold');
      expect(p.detail).toMatch(/deduplication\.duplicateThreshold/);
      const dark = await problem(
        await send('POST', '/admin/management/settings', { key: 'checks.face.maxBrightness', value: 10 }),
        400,
      );
      expect(dark.key).toBe('checks.face.maxBrightness');
      // Raising the upper bound first makes room; going back to the default is refused while it would cross.
      await ok('POST', '/admin/management/settings', { key: 'deduplication.duplicateThreshold', value: 90 });
      await ok('POST', '/admin/management/settings', { key: 'deduplication.adjudicationThreshold', value: 80 });
      await problem(await send('DELETE', '/admin/management/setting?key=deduplication.duplicateThreshold'), 400);
      await ok('POST', '/admin/management/settings', { key: 'deduplication.adjudicationThreshold', value: null });
      await ok('DELETE', '/admin/management/setting?key=deduplication.duplicateThreshold');
      expect(await booted.services.settings.get('deduplication.duplicateThreshold')).toBe(72);
    });

    it('finds settings by key prefix', async () => {
      const face = await ok('GET', '/admin/management/settings/key?key=checks.face.');
      expect(face.length).toBeGreaterThanOrEqual(7);
      expect(face.every((s: { key: string }) => s.key.startsWith('checks.face.'))).toBe(true);
      expect(face.map((s: { key: string }) => s.key)).toEqual(
        expect.arrayContaining([
          'checks.face.maxYaw',
          'checks.face.maxPitch',
          'checks.face.maxRoll',
          'checks.face.minSharpness',
          'checks.face.minBrightness',
          'checks.face.maxBrightness',
          'checks.face.minEyeOpen',
        ]),
      );
      const dedup = await ok('GET', '/management/settings/key?key=deduplication.');
      expect(dedup.map((s: { key: string }) => s.key)).toEqual([
        'deduplication.adjudicationThreshold',
        'deduplication.duplicateThreshold',
      ]);
      expect(await ok('GET', '/admin/management/settings/key?key=no.such.')).toEqual([]);
      expect(await ok('GET', '/admin/management/settings/key?key=matching')).toEqual([
        expect.objectContaining({ key: 'matching.threshold', value: 60 }),
      ]);
    });

    it('deletes an override with value null or deleteSetting, back to the default', async () => {
      const cleared = await ok('POST', '/admin/management/settings', { key: 'matching.threshold', value: null });
      expect(cleared).toMatchObject({ value: 48, overridden: false });
      expect(cleared).not.toHaveProperty('updatedAt');
      expect(await booted.services.settings.get('matching.threshold')).toBe(48);
      expect(await ok('DELETE', '/admin/management/setting?key=liveness.mode')).toMatchObject({
        value: 'NONE',
        overridden: false,
      });
      expect(await ok('DELETE', '/management/setting?key=liveness.mode')).toMatchObject({
        value: 'NONE',
        overridden: false,
      });
      expect(await booted.services.settings.get('liveness.mode')).toBe('NONE');
      await problem(await send('DELETE', '/admin/management/setting?key=no.such.key'), 404);
    });

    it('resets every setting to its default', async () => {
      await ok('POST', '/admin/management/settings', { key: 'adjudication.leaseSeconds', value: 60 });
      const reset = await ok('POST', '/admin/management/settings/reset');
      expect(reset.removed).toBe(2); // faces.allowMultiple and adjudication.leaseSeconds
      expect(reset.settings.every((s: { overridden: boolean }) => !s.overridden)).toBe(true);
      expect(await booted.services.settings.get('faces.allowMultiple')).toBe(false);
      expect(await booted.services.settings.get('adjudication.leaseSeconds')).toBe(900);
      expect((await ok('POST', '/management/settings/reset')).removed).toBe(0);
    });

    it('lists the default properties of biometric operations with type and range', async () => {
      const properties = await ok('GET', '/admin/management/default-properties');
      const byKey = new Map(properties.map((p: { key: string }) => [p.key, p]));
      expect(byKey.get('matching.threshold')).toEqual(
        expect.objectContaining({ type: 'number', default: 48, minimum: 0, maximum: 200 }),
      );
      expect(byKey.get('liveness.mode')).toEqual(
        expect.objectContaining({ type: 'enum', default: 'NONE', allowedValues: ['NONE', 'PASSIVE'] }),
      );
      expect(byKey.get('faces.allowMultiple')).toEqual(expect.objectContaining({ type: 'boolean', default: false }));
      expect(byKey.get('checks.face.maxYaw')).toEqual(
        expect.objectContaining({ type: 'number', minimum: 0, maximum: 90 }),
      );
      // Service policies are settings, not properties of an operation.
      expect(byKey.has('adjudication.leaseSeconds')).toBe(false);
      expect(byKey.has('retention.images.days')).toBe(false);
      // Defaults, even while an override is in force.
      await ok('POST', '/admin/management/settings', { key: 'matching.threshold', value: 70 });
      expect(
        (await ok('GET', '/management/default-properties')).find((p: { key: string }) => p.key === 'matching.threshold')
          .default,
      ).toBe(48);
      await ok('POST', '/admin/management/settings/reset');
    });

    it('gives management info with real counts', async () => {
      const before = await ok('GET', '/admin/management/info');
      expect(before).toMatchObject({
        version: '0.1.0',
        templateVersion: CURRENT_FACE_TEMPLATE_VERSION,
        database: { dialect, serverVersion: expect.stringMatching(/^PostgreSQL \d+/) },
        counts: {
          subjects: { total: 0, ENROLLED: 0, PENDING_ADJUDICATION: 0, REJECTED: 0 },
          operations: 0,
          accounts: 1,
          pendingAdjudicationCases: 0,
          exceptions: 0,
        },
        node: { id: booted.services.ctx.node.id, hostname: 'test-host', runtime: 'test' },
        workerPool: { state: 'not-configured' },
        licence: {
          mode: 'UNLICENSED',
          state: 'UNLICENSED',
          message: expect.stringContaining('BIMS_LICENCE_PUBLIC_KEY'),
        },
      });
      expect(before.uptimeSeconds).toBeGreaterThanOrEqual(0);

      for (const [username, role] of [
        ['adj', 'ADJUDICATOR'],
        ['usr', 'USER'],
      ]) {
        expect(
          (await send('POST', '/admin/accounts/create', { username, password: `${username}-password`, role })).status,
        ).toBe(201);
      }
      await db()
        .insertInto('subjects')
        .values([
          { subject_id: 's1', status: 'ENROLLED', metadata: jsonb({}) },
          { subject_id: 's2', status: 'ENROLLED', metadata: jsonb({}) },
          { subject_id: 's3', status: 'PENDING_ADJUDICATION', metadata: jsonb({}) },
        ])
        .execute();
      await db()
        .insertInto('operations')
        .values({
          uuid: crypto.randomUUID(),
          type: 'ENROLL',
          status: 'SUCCESS',
          subject_id: 's1',
          modalities: jsonb(['FACE']),
          candidates: jsonb(null),
          checks: jsonb(null),
          details: jsonb(null),
          duration_ms: 5,
        })
        .execute();
      await db()
        .insertInto('adjudication_cases')
        .values([
          { operation_uuid: crypto.randomUUID(), subject_id: 's3', candidates: jsonb([]) },
          {
            operation_uuid: crypto.randomUUID(),
            subject_id: 's2',
            candidates: jsonb([]),
            status: 'SOLVED',
            solved_at: new Date(),
          },
        ])
        .execute();
      const after = await ok('GET', '/admin/management/info');
      expect(after.counts).toEqual({
        subjects: { total: 3, ENROLLED: 2, PENDING_ADJUDICATION: 1, REJECTED: 0 },
        operations: 1,
        accounts: 3,
        pendingAdjudicationCases: 1,
        exceptions: 0,
      });
    });

    it('answers management info on each surface with that surface role', async () => {
      expect((await send('GET', '/adjudicator/management/info', undefined, adjudicatorAuth)).status).toBe(200);
      expect((await send('GET', '/adjudicator/management/info', undefined, adminAuth)).status).toBe(200);
      expect((await problem(await send('GET', '/adjudicator/management/info', undefined, userAuth), 403)).type).toMatch(
        /\/forbidden$/,
      );
      expect((await send('GET', '/user/management/info', undefined, userAuth)).status).toBe(200);
      expect((await send('GET', '/user/management/default-properties', undefined, userAuth)).status).toBe(200);
      // The rest of the root surface belongs to ADMIN.
      for (const auth of [userAuth, adjudicatorAuth]) {
        await problem(await send('GET', '/management/info', undefined, auth), 403);
        await problem(await send('POST', '/management/settings', { key: 'matching.threshold', value: 1 }, auth), 403);
        await problem(await send('DELETE', '/management/database/clear-db', undefined, auth), 403);
        await problem(await send('GET', '/admin/management/settings', undefined, auth), 403);
      }
      expect((await problem(await send('GET', '/user/management/settings', undefined, userAuth), 404)).type).toMatch(
        /\/route-not-found$/,
      );
      expect((await send('GET', '/adjudicator/management/settings', undefined, adminAuth)).status).toBe(404);
      expect(await booted.services.settings.get('matching.threshold')).toBe(48);
    });

    it('reports the cluster status as the database gives it, with the service nodes', async () => {
      const stale = new Date(Date.now() - 10 * 60_000);
      await db()
        .insertInto('service_nodes')
        .values({
          node_id: 'old-node',
          hostname: 'gone',
          version: '0.0.9',
          runtime: 'node',
          started_at: stale,
          last_seen_at: stale,
        })
        .execute();
      const status = await ok('GET', '/admin/management/cluster/status');
      expect(status).toMatchObject({
        dialect,
        role: 'primary',
        serverVersion: expect.stringMatching(/^PostgreSQL \d+/),
        replication: [],
        notes: [],
      });
      expect(typeof status.database).toBe('string');
      expect(status.connections.length).toBeGreaterThanOrEqual(1);
      expect(status.connections.reduce((n: number, c: { count: number }) => n + c.count, 0)).toBeGreaterThanOrEqual(1);
      const nodes = new Map(status.nodes.map((n: { nodeId: string }) => [n.nodeId, n]));
      expect(nodes.get(booted.services.ctx.node.id)).toMatchObject({
        alive: true,
        current: true,
        hostname: 'test-host',
      });
      expect(nodes.get('old-node')).toMatchObject({ alive: false, current: false, lastSeenAt: stale.toISOString() });
      expect(await ok('GET', '/management/cluster/status')).toMatchObject({ dialect, role: 'primary' });
    });

    it('clears the database but keeps accounts, settings, sign-in state, migrations and this node', async () => {
      await ok('POST', '/admin/management/settings', { key: 'identify.maxCandidates', value: 25 });
      await db()
        .insertInto('exceptions')
        .values({
          id: 'e-1',
          type: 'Error',
          message: 'x',
          method: 'GET',
          path: '/x',
          operation_id: null,
          account_id: null,
          surface: 'admin',
          call_stack: '',
        })
        .execute();
      const migrations = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(db());

      const res = await ok('DELETE', '/admin/management/database/clear-db');
      expect(res.removed).toMatchObject({
        subjects: 3,
        operations: 1,
        adjudication_cases: 2,
        exceptions: 1,
        service_nodes: 1,
        templates: 0,
      });
      expect(res.total).toBe(3 + 1 + 2 + 1 + 1);
      for (const kept of ['accounts', 'settings', 'kysely_migration', 'signing_keys', 'licences', 'refresh_tokens']) {
        expect(res.removed, kept).not.toHaveProperty(kept);
        expect(res.kept).toContain(kept);
      }

      const info = await ok('GET', '/admin/management/info'); // the admin can still sign in
      expect(info.counts).toEqual({
        subjects: { total: 0, ENROLLED: 0, PENDING_ADJUDICATION: 0, REJECTED: 0 },
        operations: 0,
        accounts: 3,
        pendingAdjudicationCases: 0,
        exceptions: 0,
      });
      expect((await send('GET', '/user/management/info', undefined, userAuth)).status).toBe(200);
      expect(await booted.services.settings.get('identify.maxCandidates')).toBe(25);
      expect((await ok('GET', '/admin/management/setting?key=identify.maxCandidates')).value).toBe(25);
      expect((await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(db())).rows).toEqual(
        migrations.rows,
      );
      const nodes = await db().selectFrom('service_nodes').select('node_id').execute();
      expect(nodes).toEqual([{ node_id: booted.services.ctx.node.id }]);

      const again = await ok('DELETE', '/management/database/clear-db');
      expect(again.total).toBe(0);
    });
  });
}
