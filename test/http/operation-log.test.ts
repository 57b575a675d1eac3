import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodePng } from '../../src/biometrics/image/encode.js';
import { json } from '../../src/db/json.js';
import { ChecksFromImageShape } from '../../src/schemas/operations.js';
import { recordOperation, type OperationRecord } from '../../src/services/operation-log/record.js';
import { adminAuth, basic, bootForTest, serviceDialects } from '../support/databases.js';
import { send as request } from '../support/http.js';
import { parseSeedOperations } from '../support/seed.js';

/**
 * The operation log (seed 4.10): getLog, getLogCount, getOperationById, getOperationByUUID, deleteOperation and
 * deleteOperations over HTTP on PGlite (serviceDialects; the log's SQL runs over both in test/db). Operations are written with `recordOperation`, as the services
 * that perform them do, so the log is tested without the face engine.
 */

const admin = { accountId: 1, username: 'admin', role: 'ADMIN' as const, via: 'basic' as const };
const png = (shade: number) => encodePng({ width: 4, height: 4, data: new Uint8Array(48).fill(shade) });
const at = (day: number, hour = 12) => new Date(Date.UTC(2026, 0, day, hour));
const USER_PASSWORD = 'operator-password';
const userAuth = basic('operator', USER_PASSWORD);

const checks = {
  faceCount: 1,
  faces: [
    {
      rectangle: { x: 10, y: 12, width: 80, height: 96 },
      landmarks: [
        { x: 30, y: 40 },
        { x: 60, y: 40 },
        { x: 45, y: 60 },
        { x: 35, y: 80 },
        { x: 55, y: 80 },
      ],
      yaw: 1.5,
      pitch: -2,
      roll: 0.5,
      eyesOpen: { left: 1, right: 1 },
      quality: 31,
      sharpness: 40,
      brightness: 55,
      icaoWarnings: ['BLURRED'],
    },
  ],
  icaoWarnings: ['BLURRED'],
  passed: false,
};
const candidates = [{ subjectId: 'bob', score: 20.5, scores: { FACE: 20.5 }, rank: 1 }];

for (const dialect of serviceDialects) {
  describe(`operation log on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    let userId: number;
    /** The six logged operations by name, with the `Operation` each must be presented as. */
    const ops: Record<string, { uuid: string; expected: Record<string, unknown> }> = {};
    let aliceRef: number;

    const send = (method: string, path: string, body?: unknown, auth: string | null = adminAuth) =>
      request(booted.app, method, path, body, auth);
    const getJson = async (path: string, auth: string | null = adminAuth) => {
      const res = await send('GET', path, undefined, auth);
      const text = await res.text();
      expect(res.status, `${path}: ${text}`).toBe(200);
      return JSON.parse(text);
    };
    const uuidsOf = (list: { uuid: string }[]) => list.map((o) => o.uuid);
    const named = (...names: string[]) => names.map((n) => ops[n]!.uuid);

    async function log(
      name: string,
      op: Omit<OperationRecord, 'uuid' | 'principal' | 'durationMs'> & { durationMs?: number; accountId?: number },
    ) {
      const uuid = randomUUID();
      const principal =
        op.accountId === undefined
          ? admin
          : { accountId: op.accountId, username: 'operator', role: 'USER' as const, via: 'basic' as const };
      const row = await recordOperation(booted.services.ctx.db, {
        ...op,
        uuid,
        principal,
        durationMs: op.durationMs ?? 10,
      });
      ops[name] = {
        uuid,
        expected: {
          id: row.id,
          uuid,
          type: op.type,
          status: op.status,
          ...(op.subjectId ? { subjectId: op.subjectId } : {}),
          modalities: op.modalities,
          ...(op.score != null ? { score: op.score } : {}),
          ...(op.threshold != null ? { threshold: op.threshold } : {}),
          ...(op.candidates ? { candidates: op.candidates } : {}),
          // Checks as the model presents them (the stored JSON passes through the response schema).
          ...(op.checks ? { checks: ChecksFromImageShape.parse(op.checks) } : {}),
          durationMs: op.durationMs ?? 10,
          createdAt: op.at.toISOString(),
          accountId: principal.accountId,
          surface: op.surface,
        },
      };
      return uuid;
    }

    async function storeImage(
      operationUuid: string,
      subjectRef: number | null,
      kind: 'ORIGINAL' | 'TOKEN' = 'ORIGINAL',
    ) {
      const row = await booted.services.ctx.db
        .insertInto('images')
        .values({
          operation_uuid: operationUuid,
          subject_ref: subjectRef,
          kind,
          format: 'PNG',
          width: 4,
          height: 4,
          bytes: png(90),
          created_at: at(1),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    }
    async function storeFaceSample(operationUuid: string, subjectRef: number | null, imageId: number | null) {
      await booted.services.ctx.db
        .insertInto('face_samples')
        .values({
          subject_ref: subjectRef,
          operation_uuid: operationUuid,
          image_id: imageId,
          rectangle: json({ x: 0, y: 0, width: 4, height: 4 }),
          landmarks: json(null),
          template_version: 'face-test-v1',
          created_at: at(1),
        })
        .execute();
    }
    const countRows = async (table: 'images' | 'face_samples' | 'operations', uuid: string) =>
      Number(
        (
          await booted.services.ctx.db
            .selectFrom(table as 'images')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where(table === 'operations' ? ('uuid' as 'operation_uuid') : 'operation_uuid', '=', uuid)
            .executeTakeFirstOrThrow()
        ).n,
      );

    beforeAll(async () => {
      booted = await bootForTest(dialect);
      const created = await send('POST', '/admin/accounts/create', {
        username: 'operator',
        password: USER_PASSWORD,
        role: 'USER',
      });
      expect(created.status).toBe(201);
      userId = (await created.json()).id;

      const enroll = await log('enroll', {
        type: 'ENROLL',
        status: 'SUCCESS',
        subjectId: 'alice',
        modalities: ['FACE'],
        score: 30,
        threshold: 72,
        candidates: [],
        durationMs: 900,
        surface: 'admin',
        at: at(1),
        details: { samples: 1 },
      });
      const alice = await booted.services.ctx.db
        .insertInto('subjects')
        .values({
          subject_id: 'alice',
          status: 'ENROLLED',
          metadata: json({}),
          template_version: 'face-test-v1',
          enrollment_operation_uuid: enroll,
          created_at: at(1),
          updated_at: at(1),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      aliceRef = alice.id;
      await storeFaceSample(enroll, aliceRef, await storeImage(enroll, aliceRef));

      const verify = await log('verify', {
        type: 'VERIFY',
        status: 'SUCCESS',
        subjectId: 'alice',
        modalities: ['FACE'],
        score: 80.25,
        threshold: 48,
        durationMs: 120,
        surface: 'root',
        at: at(2),
        details: { internal: 'never shown' },
      });
      await storeFaceSample(verify, null, await storeImage(verify, null));
      await storeImage(verify, null, 'TOKEN');
      await log('identify', {
        type: 'IDENTIFY',
        status: 'MATCH_NOT_FOUND',
        modalities: ['FACE', 'VOICE'],
        threshold: 48,
        candidates,
        durationMs: 300,
        surface: 'user',
        accountId: userId,
        at: at(3),
      });
      await log('check', {
        type: 'CHECK',
        status: 'QUALITY_CHECK_FAILED',
        modalities: ['FACE'],
        checks,
        durationMs: 40,
        surface: 'admin',
        at: at(4),
      });
      await log('remote', {
        type: 'REMOTE_VERIFY',
        status: 'SUCCESS',
        subjectId: 'carol',
        modalities: ['FACE'],
        score: 60,
        threshold: 48,
        durationMs: 5,
        surface: 'user',
        accountId: userId,
        at: at(5),
      });
      await log('reextract', {
        type: 'REEXTRACT',
        status: 'FAILED',
        subjectId: 'alice',
        modalities: ['FACE'],
        durationMs: 2000,
        surface: 'root',
        at: at(6),
      });
    });
    afterAll(async () => {
      await booted?.close();
    });

    it('answers each operation on exactly the surfaces the seed marks, 404 route-not-found elsewhere (405 where the surface has the path with another method)', async () => {
      const seed = new Map(parseSeedOperations().map((o) => [o.id, o]));
      const query: Record<string, string> = {
        getLog: '',
        getLogCount: '',
        getOperationById: `?id=${ops.verify!.expected.id}`,
        getOperationByUUID: `?uuid=${ops.check!.uuid}`,
        deleteOperation: `?uuid=${randomUUID()}`,
        deleteOperations: '',
      };
      const expectedStatus: Record<string, number> = { deleteOperation: 404, deleteOperations: 404 };
      for (const [id, q] of Object.entries(query)) {
        const op = seed.get(id)!;
        expect(Object.keys(op.paths).sort(), id).toEqual(
          id === 'getOperationByUUID' ? ['admin', 'root', 'user'] : ['admin', 'root'],
        );
        for (const surface of ['admin', 'root', 'user'] as const) {
          const path = op.paths[surface] ?? `${surface === 'user' ? '/user' : '/admin'}${op.paths.root}`;
          const body = id === 'deleteOperations' ? { uuids: [randomUUID()] } : undefined;
          const res = await send(op.method, `${path}${q}`, body);
          const text = await res.text();
          if (op.paths[surface]) {
            expect(res.headers.get('x-bims-operation'), `${id} on ${surface}`).toBe(id);
            expect(res.status, `${id} on ${surface}: ${text}`).toBe(expectedStatus[id] ?? 200);
          } else if (id === 'deleteOperation' && surface === 'user') {
            // The path is the user surface's getOperationByUUID: a known path asked with another method.
            expect(res.status, `${id} on ${surface}`).toBe(405);
            expect(res.headers.get('allow'), `${id} on ${surface}`).toBe('GET, HEAD');
            expect(JSON.parse(text).type, `${id} on ${surface}`).toMatch(/\/method-not-allowed$/);
          } else {
            expect(res.status, `${id} on ${surface}`).toBe(404);
            expect(JSON.parse(text).type, `${id} on ${surface}`).toMatch(/\/route-not-found$/);
          }
        }
      }
    });

    it('asks for credentials and the scope of each surface', async () => {
      expect((await send('GET', '/admin/operations', undefined, null)).status).toBe(401);
      expect((await send('GET', '/operations/count', undefined, null)).status).toBe(401);
      expect((await send('GET', `/user/operations/uuid/?uuid=${ops.remote!.uuid}`, undefined, null)).status).toBe(401);
      expect((await send('GET', '/admin/operations', undefined, userAuth)).status).toBe(403);
      expect((await send('GET', '/operations', undefined, userAuth)).status).toBe(403);
      expect(
        (await send('DELETE', `/admin/operations/uuid/?uuid=${ops.check!.uuid}`, undefined, userAuth)).status,
      ).toBe(403);
      expect((await send('DELETE', '/operations', { uuids: [ops.check!.uuid] }, userAuth)).status).toBe(403);
      expect(await countRows('operations', ops.check!.uuid)).toBe(1);
    });

    it('lists newest first by default, each answer exactly the Operation model (no internal columns)', async () => {
      for (const prefix of ['/admin', '']) {
        const list = await getJson(`${prefix}/operations`);
        expect(uuidsOf(list)).toEqual(named('reextract', 'remote', 'check', 'identify', 'verify', 'enroll'));
        for (const item of list) {
          const name = Object.keys(ops).find((n) => ops[n]!.uuid === item.uuid)!;
          expect(item, name).toStrictEqual(ops[name]!.expected);
          expect(item).not.toHaveProperty('details');
        }
      }
      const check = (await getJson('/admin/operations?type=CHECK'))[0];
      expect(check.checks).toEqual(ChecksFromImageShape.parse(checks));
      expect(check.checks.icaoWarnings).toEqual(['BLURRED']);
      expect(check).not.toHaveProperty('score');
      expect(check).not.toHaveProperty('subjectId');
    });

    it('filters by every field, and the count twin agrees on each filter', async () => {
      const cases: [string, string[]][] = [
        ['type=VERIFY', ['verify']],
        ['type=REEXTRACT', ['reextract']],
        ['status=SUCCESS', ['remote', 'verify', 'enroll']],
        ['status=DUPLICATE_FOUND', []],
        ['subjectId=alice', ['reextract', 'verify', 'enroll']],
        ['subjectId=ali', []],
        ['surface=user', ['remote', 'identify']],
        ['surface=root', ['reextract', 'verify']],
        [`accountId=${userId}`, ['remote', 'identify']],
        ['accountId=1', ['reextract', 'check', 'verify', 'enroll']],
        [`createdFrom=${at(3).toISOString()}`, ['reextract', 'remote', 'check', 'identify']],
        [`createdTo=${at(2).toISOString()}`, ['verify', 'enroll']],
        [`createdFrom=${at(2).toISOString()}&createdTo=${at(4).toISOString()}`, ['check', 'identify', 'verify']],
        [
          `createdFrom=${encodeURIComponent('2026-01-03T13:00:00+01:00')}&createdTo=${at(3).toISOString()}`,
          ['identify'],
        ],
        ['type=VERIFY&status=SUCCESS&subjectId=alice&surface=root&accountId=1', ['verify']],
        ['type=VERIFY&surface=user', []],
      ];
      for (const [query, expected] of cases) {
        for (const prefix of ['/admin', '']) {
          expect(uuidsOf(await getJson(`${prefix}/operations?${query}`)), query).toEqual(named(...expected));
          expect(await getJson(`${prefix}/operations/count?${query}`), query).toEqual({ count: expected.length });
        }
      }
      expect(await getJson('/admin/operations/count')).toEqual({ count: 6 });
    });

    it('pages without overlap or gaps and honours the size limits', async () => {
      const pages = [];
      for (let page = 0; page < 4; page++)
        pages.push(uuidsOf(await getJson(`/admin/operations?size=2&page=${page}&sort=id,asc`)));
      expect(pages).toEqual([named('enroll', 'verify'), named('identify', 'check'), named('remote', 'reextract'), []]);
      expect(uuidsOf(await getJson('/operations?size=1&page=1'))).toEqual(named('remote'));
      expect(await getJson('/admin/operations?size=1000')).toHaveLength(6);
      expect(uuidsOf(await getJson('/admin/operations?status=SUCCESS&size=2&page=1'))).toEqual(named('enroll'));
    });

    it('sorts by every declared field in both directions', async () => {
      const cases: [string, string[]][] = [
        ['id', ['enroll', 'verify', 'identify', 'check', 'remote', 'reextract']],
        ['id,desc', ['reextract', 'remote', 'check', 'identify', 'verify', 'enroll']],
        ['createdAt,asc', ['enroll', 'verify', 'identify', 'check', 'remote', 'reextract']],
        ['createdAt,desc', ['reextract', 'remote', 'check', 'identify', 'verify', 'enroll']],
        ['durationMs,asc', ['remote', 'check', 'verify', 'identify', 'enroll', 'reextract']],
        ['durationMs,desc', ['reextract', 'enroll', 'identify', 'verify', 'check', 'remote']],
        // Operations without a score or a subject come last either way; ties go by id in the same direction.
        ['score,desc', ['verify', 'remote', 'enroll', 'reextract', 'check', 'identify']],
        ['score,asc', ['enroll', 'remote', 'verify', 'identify', 'check', 'reextract']],
        ['subjectId,asc', ['enroll', 'verify', 'reextract', 'remote', 'identify', 'check']],
        ['subjectId,desc', ['remote', 'reextract', 'verify', 'enroll', 'check', 'identify']],
        ['type,asc', ['check', 'enroll', 'identify', 'reextract', 'remote', 'verify']],
        ['type,desc', ['verify', 'remote', 'reextract', 'identify', 'enroll', 'check']],
        ['status,asc', ['reextract', 'identify', 'check', 'enroll', 'verify', 'remote']],
        ['status,desc', ['remote', 'verify', 'enroll', 'check', 'identify', 'reextract']],
      ];
      for (const [sort, expected] of cases) {
        expect(uuidsOf(await getJson(`/admin/operations?sort=${sort}`)), sort).toEqual(named(...expected));
      }
    });

    it('answers 400 problems naming the field for bad filters, sorts, paging, ranges, ids and UUIDs', async () => {
      const later = at(5).toISOString();
      const earlier = at(2).toISOString();
      const bad: [string, string, RegExp][] = [
        ['GET', '/admin/operations?colour=blue', /^query\.colour$/],
        ['GET', '/operations/count?colour=blue', /^query\.colour$/],
        ['GET', '/admin/operations?sort=details,asc', /^query\.sort$/],
        ['GET', '/admin/operations?sort=score,sideways', /^query\.sort$/],
        ['GET', '/admin/operations?type=LOGIN', /^query\.type$/],
        ['GET', '/admin/operations?status=OK', /^query\.status$/],
        ['GET', '/admin/operations?surface=adjudicator', /^query\.surface$/],
        ['GET', '/admin/operations?accountId=zero', /^query\.accountId$/],
        ['GET', '/admin/operations?createdFrom=yesterday', /^query\.createdFrom$/],
        ['GET', `/admin/operations?createdFrom=${later}&createdTo=${earlier}`, /^query\.createdTo$/],
        ['GET', `/operations/count?createdFrom=${later}&createdTo=${earlier}`, /^query\.createdTo$/],
        ['GET', '/admin/operations?size=1001', /^query\.size$/],
        ['GET', '/admin/operations?size=0', /^query\.size$/],
        ['GET', '/admin/operations?page=-1', /^query\.page$/],
        ['GET', '/admin/operations/count?page=1', /^query\.page$/],
        ['GET', '/admin/operations/count?sort=id', /^query\.sort$/],
        ['GET', '/admin/operations/id/', /^query\.id$/],
        ['GET', '/admin/operations/id/?id=abc', /^query\.id$/],
        ['GET', '/operations/id/?id=2147483648', /^query\.id$/],
        ['GET', '/admin/operations/uuid/?uuid=not-a-uuid', /^query\.uuid$/],
        ['GET', '/user/operations/uuid/?uuid=not-a-uuid', /^query\.uuid$/],
        ['DELETE', '/admin/operations/uuid/?uuid=not-a-uuid', /^query\.uuid$/],
        ['DELETE', '/operations/uuid/', /^query\.uuid$/],
      ];
      for (const [method, path, field] of bad) {
        const res = await send(method, path, undefined, path.startsWith('/user') ? userAuth : adminAuth);
        const text = await res.text();
        expect(res.status, `${path}: ${text}`).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        const problem = JSON.parse(text);
        expect(problem.type).toMatch(/\/validation$/);
        expect(
          problem.errors.map((e: { field: string }) => e.field),
          path,
        ).toContainEqual(expect.stringMatching(field));
      }
      // A one-instant range is fine: from == to.
      expect(
        uuidsOf(await getJson(`/admin/operations?createdFrom=${at(4).toISOString()}&createdTo=${at(4).toISOString()}`)),
      ).toEqual(named('check'));
    });

    it('finds one operation by id and by UUID on admin and root, and 404 for unknown ones', async () => {
      for (const prefix of ['/admin', '']) {
        for (const name of Object.keys(ops)) {
          const { uuid, expected } = ops[name]!;
          expect(await getJson(`${prefix}/operations/id/?id=${expected.id}`), name).toStrictEqual(expected);
          expect(await getJson(`${prefix}/operations/uuid/?uuid=${uuid}`), name).toStrictEqual(expected);
        }
        expect(await getJson(`${prefix}/operations/uuid/?uuid=${ops.verify!.uuid.toUpperCase()}`)).toStrictEqual(
          ops.verify!.expected,
        );
        for (const path of [`${prefix}/operations/id/?id=99999`, `${prefix}/operations/uuid/?uuid=${randomUUID()}`]) {
          const res = await send('GET', path);
          expect(res.status, path).toBe(404);
          const problem = await res.json();
          expect(problem.type).toMatch(/\/not-found$/);
          expect(problem.detail).toMatch(/^Operation .* was not found$/);
        }
      }
    });

    it('on the user surface shows callers their own operations only', async () => {
      expect(await getJson(`/user/operations/uuid/?uuid=${ops.remote!.uuid}`, userAuth)).toStrictEqual(
        ops.remote!.expected,
      );
      expect(await getJson(`/user/operations/uuid/?uuid=${ops.identify!.uuid}`, userAuth)).toStrictEqual(
        ops.identify!.expected,
      );
      const others = await send('GET', `/user/operations/uuid/?uuid=${ops.verify!.uuid}`, undefined, userAuth);
      expect(others.status).toBe(404);
      expect((await others.json()).type).toMatch(/\/not-found$/);
      // The admin on the user surface is a caller like any other: its own operations, not the user's.
      expect(await getJson(`/user/operations/uuid/?uuid=${ops.verify!.uuid}`)).toStrictEqual(ops.verify!.expected);
      expect((await send('GET', `/user/operations/uuid/?uuid=${ops.remote!.uuid}`)).status).toBe(404);
      expect((await send('GET', '/user/operations', undefined, userAuth)).status).toBe(404);
    });

    it("deleteOperation removes the operation and its probe data, never a subject's, then answers 404", async () => {
      const probe = await log('probe', {
        type: 'VERIFY',
        status: 'MATCH_NOT_FOUND',
        subjectId: 'alice',
        modalities: ['FACE'],
        score: 10,
        surface: 'root',
        at: at(20),
      });
      await storeFaceSample(probe, null, await storeImage(probe, null));
      await storeImage(probe, null, 'TOKEN');
      const before = {
        enroll: await countRows('images', ops.enroll!.uuid),
        verify: await countRows('images', ops.verify!.uuid),
      };

      const res = await send('DELETE', `/admin/operations/uuid/?uuid=${probe}`);
      expect(res.status, await res.clone().text()).toBe(200);
      expect(await res.json()).toStrictEqual({ deleted: 1 });
      expect(await countRows('operations', probe)).toBe(0);
      expect(await countRows('images', probe)).toBe(0);
      expect(await countRows('face_samples', probe)).toBe(0);
      expect({
        enroll: await countRows('images', ops.enroll!.uuid),
        verify: await countRows('images', ops.verify!.uuid),
      }).toEqual(before);
      expect(await getJson('/admin/operations/count')).toEqual({ count: 6 });

      const again = await send('DELETE', `/operations/uuid/?uuid=${probe}`);
      expect(again.status).toBe(404);
      const problem = await again.json();
      expect(problem.type).toMatch(/\/not-found$/);
      expect(problem.detail).toContain(probe);
      expect(problem.missing).toEqual([probe]);
      expect((await send('GET', `/admin/operations/uuid/?uuid=${probe}`)).status).toBe(404);
    });

    it('refuses with 409 naming the subject to delete an operation a stored subject depends on', async () => {
      const enroll = ops.enroll!.uuid;
      const res = await send('DELETE', `/operations/uuid/?uuid=${enroll}`);
      expect(res.status).toBe(409);
      const problem = await res.json();
      expect(problem.type).toMatch(/\/conflict$/);
      expect(problem.detail).toContain("'alice'");
      expect(problem.detail).toMatch(/delete the subject/);
      expect(problem.operations).toEqual([{ uuid: enroll, subjectIds: ['alice'] }]);
      expect(await countRows('operations', enroll)).toBe(1);
      expect(await countRows('images', enroll)).toBe(1);
      expect(await countRows('face_samples', enroll)).toBe(1);

      // Not only the enrolment: any operation that stored one of the subject's samples (a re-extraction with a new sample).
      const reextract = await log('reextract-sample', {
        type: 'REEXTRACT',
        status: 'SUCCESS',
        subjectId: 'alice',
        modalities: ['FACE'],
        surface: 'admin',
        at: at(21),
      });
      await storeImage(reextract, aliceRef);
      const sample = await send('DELETE', `/admin/operations/uuid/?uuid=${reextract}`);
      expect(sample.status).toBe(409);
      expect((await sample.json()).operations).toEqual([{ uuid: reextract, subjectIds: ['alice'] }]);
      expect(await countRows('images', reextract)).toBe(1);
      await booted.services.ctx.db.deleteFrom('images').where('operation_uuid', '=', reextract).execute();
      expect((await send('DELETE', `/admin/operations/uuid/?uuid=${reextract}`)).status).toBe(200);
    });

    it("deleteOperations is all or nothing: 404 naming every missing UUID, 409 for a subject's operation", async () => {
      const a = await log('bulk-a', {
        type: 'IDENTIFY',
        status: 'MATCH_NOT_FOUND',
        modalities: ['FACE'],
        surface: 'admin',
        at: at(22),
      });
      const b = await log('bulk-b', {
        type: 'CHECK',
        status: 'SUCCESS',
        modalities: ['FACE'],
        checks,
        surface: 'root',
        at: at(23),
      });
      await storeImage(a, null);
      await storeFaceSample(b, null, await storeImage(b, null));
      const missing = [randomUUID(), randomUUID()];

      const unknown = await send('DELETE', '/admin/operations', { uuids: [a, missing[0], b, missing[1]] });
      expect(unknown.status).toBe(404);
      const problem = await unknown.json();
      expect(problem.type).toMatch(/\/not-found$/);
      expect(problem.missing).toEqual(missing);
      for (const u of missing) expect(problem.detail).toContain(u);
      expect(problem.detail).not.toContain(a);

      const protectedOne = await send('DELETE', '/operations', { uuids: [a, ops.enroll!.uuid, b] });
      expect(protectedOne.status).toBe(409);
      expect((await protectedOne.json()).detail).toContain("'alice'");
      for (const u of [a, b]) {
        expect(await countRows('operations', u)).toBe(1);
        expect(await countRows('images', u)).toBe(1);
      }

      const ok = await send('DELETE', '/operations', { uuids: [a, b.toUpperCase(), a] });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toStrictEqual({ deleted: 2 });
      for (const u of [a, b]) {
        expect(await countRows('operations', u)).toBe(0);
        expect(await countRows('images', u)).toBe(0);
        expect(await countRows('face_samples', u)).toBe(0);
      }
      expect(await countRows('images', ops.enroll!.uuid)).toBe(1);
      expect(await getJson('/admin/operations/count')).toEqual({ count: 6 });
    });

    it('deleteOperations validates its body', async () => {
      const cases: [unknown, RegExp][] = [
        [{ uuids: [] }, /^body\.uuids$/],
        [{ uuids: ['nope'] }, /^body\.uuids\.0$/],
        [{ uuids: [randomUUID()], all: true }, /^body\.all$/],
        [{ ids: [1] }, /^body\.(uuids|ids)$/],
        [{ uuids: Array.from({ length: 1001 }, () => randomUUID()) }, /^body\.uuids$/],
      ];
      for (const [body, field] of cases) {
        const res = await send('DELETE', '/admin/operations', body);
        const text = await res.text();
        expect(res.status, text.slice(0, 200)).toBe(400);
        expect(JSON.parse(text).errors.map((e: { field: string }) => e.field)).toContainEqual(
          expect.stringMatching(field),
        );
      }
      const missingBody = await send('DELETE', '/admin/operations');
      expect(missingBody.status).toBe(400);
      expect(await getJson('/admin/operations/count')).toEqual({ count: 6 });
    });
  });
}
