import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, basic, bootForTest, serviceDialects } from '../support/databases.js';
import { listMultimodalSubjects, listSubjects } from '../../src/services/subjects/queries.js';
import {
  TEMPLATE_VERSION,
  rowsOf,
  seedCase,
  seedOperation,
  seedSubject,
  type SeededSubject,
} from '../support/subject-rows.js';

/**
 * Subject reads, lists, counts and deletes (seed 4.11) through HTTP on every surface the seed gives them,
 * on PGlite (serviceDialects: the repositories sort and filter over both in test/db). Subjects are seeded with Kysely (see test/support/subject-rows.ts) with real
 * face templates, so the in-memory gallery can be asked whether deletes reached it.
 */

const prefixes = { admin: '/admin', root: '', user: '/user' } as const;
type Surface = keyof typeof prefixes;
const USER = basic('subjects-user', 'user-password-1');

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

for (const dialect of serviceDialects) {
  describe(`subjects on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    const seeded: Record<string, SeededSubject> = {};
    const db = () => booted.services.ctx.db;

    const send = (method: string, path: string, options: { body?: unknown; auth?: string | null } = {}) => {
      const auth = options.auth === undefined ? adminAuth : options.auth;
      return booted.app.request(path, {
        method,
        headers: {
          ...(auth ? { authorization: auth } : {}),
          ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      });
    };
    const authFor = (surface: Surface) => (surface === 'user' ? USER : adminAuth);
    const get = async (surface: Surface, path: string, status = 200) => {
      const res = await send('GET', `${prefixes[surface]}${path}`, { auth: authFor(surface) });
      const text = await res.text();
      expect(res.status, `${surface} ${path}: ${text}`).toBe(status);
      return JSON.parse(text);
    };
    const identifies = async (s: SeededSubject) => {
      const matches = await booted.services.gallery.identify(s.template, { topK: 5, threshold: 0 });
      return matches.some((m) => m.subjectRef === s.id);
    };

    beforeAll(async () => {
      booted = await bootForTest(dialect);
      const created = await send('POST', '/admin/accounts/create', {
        body: { username: 'subjects-user', password: 'user-password-1', role: 'USER' },
      });
      expect(created.status).toBe(201);
      // Enrolled by the test's USER account, so that the user surface shows them to it (docs/user-surface.md).
      const userId = (await created.json()).id as number;
      const day = (d: number) => new Date(Date.UTC(2026, 0, d, 12));
      const specs = [
        { subjectId: 'alice', metadata: { country: 'FR', tier: 1 }, createdAt: day(1), faces: [60, 90] },
        { subjectId: 'bob', metadata: { country: 'DE' }, createdAt: day(2), faces: [70], voices: [55] },
        {
          subjectId: 'carol',
          status: 'PENDING_ADJUDICATION' as const,
          metadata: { country: 'FR', tags: ['vip', 'x'] },
          createdAt: day(3),
          faces: [50],
        },
        { subjectId: 'dave', status: 'REJECTED' as const, createdAt: day(4), faces: [], voices: [40, 65] },
        { subjectId: 'a%b_c', createdAt: day(5), faces: [75] },
        { subjectId: 'axbxc', createdAt: day(6), faces: [75] },
        { subjectId: 'tmp-1', createdAt: day(7), faces: [80] },
        { subjectId: 'tmp-2', createdAt: day(8), faces: [81], voices: [50] },
        { subjectId: 'tmpx', createdAt: day(9), faces: [82] },
      ];
      for (const spec of specs) seeded[spec.subjectId] = await seedSubject(db(), { ...spec, accountId: userId });
      // Seeded behind the gallery's back: make it load them from the database.
      booted.services.gallery.forget();
    });
    afterAll(async () => {
      await booted?.close();
    });

    it('getSubjects lists subjects with their samples on admin and root, never any bytes, and is not on the user surface', async () => {
      for (const surface of ['admin', 'root'] as const) {
        const res = await send('GET', `${prefixes[surface]}/subjects?size=100`);
        const text = await res.text();
        expect(res.status, text).toBe(200);
        const list = JSON.parse(text);
        expect(list.map((s: { subjectId: string }) => s.subjectId)).toEqual(Object.keys(seeded));
        const alice = list[0];
        expect(alice).toMatchObject({
          id: seeded.alice!.id,
          subjectId: 'alice',
          status: 'ENROLLED',
          modalities: ['FACE'],
          templateVersion: TEMPLATE_VERSION,
          metadata: { country: 'FR', tier: 1 },
          enrollmentOperationUuid: seeded.alice!.enrollUuid,
          voices: [],
          createdAt: '2026-01-01T12:00:00.000Z',
        });
        expect(alice.faces).toHaveLength(2);
        expect(alice.faces[0]).toMatchObject({
          uuid: seeded.alice!.enrollUuid,
          subjectId: 'alice',
          rectangle: { x: 0, y: 1, width: 3, height: 3 },
          yaw: 1.5,
          quality: 60,
          templateVersion: TEMPLATE_VERSION,
        });
        expect(alice.faces[0].imageId).toEqual(expect.any(Number));
        expect(list.find((s: { subjectId: string }) => s.subjectId === 'bob').modalities).toEqual(['FACE', 'VOICE']);
        expect(list.find((s: { subjectId: string }) => s.subjectId === 'dave')).toMatchObject({
          modalities: ['VOICE'],
          faces: [],
        });
        expect(list.find((s: { subjectId: string }) => s.subjectId === 'dave').voices[0]).toMatchObject({
          durationMs: 2000,
          sampleRate: 16000,
          quality: 40,
          speechRatio: 0.75,
        });
        // No template, image or audio bytes, under any name.
        for (const s of Object.values(seeded)) {
          expect(text).not.toContain(base64(s.template).slice(0, 40));
          expect(text).not.toContain(base64(s.png).slice(8, 40));
        }
        expect(text).not.toMatch(/"(template|bytes|audio|data|embedding)"/);
      }
      const user = await send('GET', '/user/subjects', { auth: USER });
      expect(user.status).toBe(404);
      expect((await user.json()).type).toMatch(/\/route-not-found$/);
      expect((await send('GET', '/admin/subjects', { auth: null })).status).toBe(401);
      expect((await send('GET', '/admin/subjects', { auth: USER })).status).toBe(403);
    });

    it('filters by status, modality, created range, metadata and subjectId prefix, and the count twin agrees', async () => {
      const cases: [string, string[]][] = [
        ['status=PENDING_ADJUDICATION', ['carol']],
        ['status=REJECTED', ['dave']],
        ['modality=VOICE', ['bob', 'dave', 'tmp-2']],
        ['modality=FACE&status=ENROLLED&createdTo=2026-01-02T12:00:00Z', ['alice', 'bob']],
        ['createdFrom=2026-01-03T12:00:00Z&createdTo=2026-01-05T00:00:00Z', ['carol', 'dave']],
        [`metadata=${encodeURIComponent('{"country":"FR"}')}`, ['alice', 'carol']],
        [`metadata=${encodeURIComponent('{"country":"FR","tier":1}')}`, ['alice']],
        [`metadata=${encodeURIComponent('{"tags":["vip"]}')}`, ['carol']],
        [`metadata=${encodeURIComponent('{"country":"XX"}')}`, []],
        ['subjectId=a', ['a%b_c', 'alice', 'axbxc']],
        [`subjectId=${encodeURIComponent('a%b_')}`, ['a%b_c']],
        [`subjectId=${encodeURIComponent('a_b')}`, []],
        ['subjectId=tmp-', ['tmp-1', 'tmp-2']],
        ['templateVersion=face-test-v1&subjectId=tmpx', ['tmpx']],
      ];
      for (const [query, expected] of cases) {
        for (const surface of ['admin', 'root'] as const) {
          const list = await get(surface, `/subjects?${query}&sort=subjectId&size=100`);
          expect(
            list.map((s: { subjectId: string }) => s.subjectId),
            query,
          ).toEqual([...expected].sort());
          expect((await get(surface, `/subjects/count?${query}`)).count, query).toBe(expected.length);
          const multi = await get(surface, `/subjects/multimodal?${query}&sort=subjectId&size=100`);
          expect(
            multi.map((s: { subjectId: string }) => s.subjectId),
            query,
          ).toEqual([...expected].sort());
        }
        const ids = await get('user', `/subjects/id-list?${query}&sort=subjectId&size=100`);
        expect(
          ids.map((s: { subjectId: string }) => s.subjectId),
          query,
        ).toEqual([...expected].sort());
      }
    });

    it('pages and sorts, and refuses unknown sort fields, unknown parameters and malformed metadata with 400', async () => {
      const page0 = await get('admin', '/subjects?size=2&page=0&sort=createdAt,desc');
      const page1 = await get('admin', '/subjects?size=2&page=1&sort=createdAt,desc');
      expect([...page0, ...page1].map((s: { subjectId: string }) => s.subjectId)).toEqual([
        'tmpx',
        'tmp-2',
        'tmp-1',
        'axbxc',
      ]);
      expect(await get('admin', '/subjects?size=5&page=100')).toEqual([]);
      expect((await get('root', '/subjects/count')).count).toBe(9);
      const ids = await get('admin', '/subjects/id-list?size=3&page=1&sort=id');
      expect(ids).toEqual(['dave', 'a%b_c', 'axbxc'].map((s) => ({ id: seeded[s]!.id, subjectId: s })));
      const bad: [string, RegExp][] = [
        ['/subjects?sort=password,asc', /query\.sort/],
        ['/subjects?sort=status,sideways', /query\.sort/],
        ['/subjects?colour=blue', /query\.colour/],
        ['/subjects/count?page=1', /query\.page/],
        ['/subjects/count?status=ASLEEP', /query\.status/],
        ['/subjects?modality=IRIS', /query\.modality/],
        ['/subjects?createdFrom=yesterday', /query\.createdFrom/],
        ['/subjects?size=1001', /query\.size/],
        [`/subjects?metadata=${encodeURIComponent('{"country":')}`, /query\.metadata/],
        [`/subjects?metadata=${encodeURIComponent('["FR"]')}`, /query\.metadata/],
        ['/subjects/count?metadata=FR', /query\.metadata/],
        ['/subjects/multimodal?metadata=null', /query\.metadata/],
        ['/subjects/id-list?sort=status', /query\.sort/],
      ];
      for (const [path, field] of bad) {
        const res = await send('GET', `/admin${path}`);
        const text = await res.text();
        expect(res.status, `${path}: ${text}`).toBe(400);
        expect(JSON.parse(text).type).toMatch(/\/validation$/);
        expect(text).toMatch(field);
      }
    });

    it('reads a page with its samples in one query, whatever the page size', async () => {
      let queries = 0;
      const counted = db().withPlugin({
        transformQuery: (args) => {
          queries += 1;
          return args.node;
        },
        transformResult: async (args) => args.result,
      });
      // Statements compiled once (the subject reads) go to `executeQuery` as they are, past the plugin: counted there.
      const countedToo = new Proxy(counted, {
        get(target, key) {
          if (key === 'executeQuery')
            return (...args: Parameters<typeof target.executeQuery>) => ((queries += 1), target.executeQuery(...args));
          const value = Reflect.get(target, key, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const ctx = { ...booted.services.ctx, db: countedToo };
      for (const size of [1, 3, 100]) {
        queries = 0;
        const page = await listSubjects(ctx, { page: 0, size });
        expect(page.length).toBe(Math.min(size, 9));
        // The page itself with its face samples, voice samples and templates as JSON (issue 18).
        expect(queries, `page of ${size}`).toBe(1);
        queries = 0;
        await listMultimodalSubjects(ctx, { page: 0, size });
        expect(queries, `multimodal page of ${size}`).toBe(1);
      }
    });

    it('finds one subject by id, subjectId and operation UUID, plain and multimodal, on their surfaces', async () => {
      const bob = seeded.bob!;
      const verifyUuid = await seedOperation(db(), 'bob');
      for (const surface of ['admin', 'root'] as const) {
        expect((await get(surface, `/subjects/id/${bob.id}`)).subjectId).toBe('bob');
        expect((await get(surface, '/subjects/bob')).id).toBe(bob.id);
        expect((await get(surface, `/subjects/${encodeURIComponent('a%b_c')}`)).subjectId).toBe('a%b_c');
        const multi = await get(surface, `/subjects/multimodal/id/${bob.id}`);
        expect(multi).toMatchObject({
          subjectId: 'bob',
          face: { templateVersion: TEMPLATE_VERSION, quality: 70 },
          voice: { templateVersion: 'voice-test-v1', quality: 55 },
        });
        expect(multi.face.samples).toHaveLength(1);
        expect(multi).not.toHaveProperty('faces');
        const alice = await get(surface, '/subjects/multimodal/alice');
        expect(alice.face).toMatchObject({ quality: 90, samples: [expect.any(Object), expect.any(Object)] });
        expect(alice).not.toHaveProperty('voice');
        expect((await get(surface, '/subjects/multimodal/dave')).voice.quality).toBe(65);
      }
      for (const surface of ['admin', 'root', 'user'] as const) {
        expect((await get(surface, `/subjects/operation/${bob.enrollUuid}`)).subjectId).toBe('bob');
        expect((await get(surface, `/subjects/operation/${verifyUuid}`)).subjectId).toBe('bob');
        expect((await get(surface, `/subjects/multimodal/operation/${bob.enrollUuid}`)).voice.samples).toHaveLength(1);
        const missing = await get(surface, `/subjects/operation/${crypto.randomUUID()}`, 404);
        expect(missing.type).toMatch(/\/not-found$/);
        await get(surface, `/subjects/multimodal/operation/${crypto.randomUUID()}`, 404);
        expect((await get(surface, '/subjects/operation/not-a-uuid', 400)).errors[0].field).toBe('path.uuid');
      }
      const identify = await seedOperation(db(), null, 'IDENTIFY');
      await get('admin', `/subjects/operation/${identify}`, 404);
      for (const path of [
        '/subjects/id/999999',
        '/subjects/nobody',
        '/subjects/multimodal/id/999999',
        '/subjects/multimodal/nobody',
      ]) {
        expect((await get('admin', path, 404)).type).toMatch(/\/not-found$/);
      }
      await get('admin', '/subjects/id/0', 400);
      for (const path of [
        `/subjects/id/${bob.id}`,
        '/subjects/bob',
        '/subjects/multimodal/bob',
        `/subjects/multimodal/id/${bob.id}`,
      ]) {
        expect((await send('GET', `/user${path}`, { auth: USER })).status).toBe(404);
      }
    });

    it('tells the enrolled modalities of a subject on every surface', async () => {
      for (const surface of ['admin', 'root', 'user'] as const) {
        expect(await get(surface, '/subjects/modality/types?subjectId=bob')).toEqual({
          subjectId: 'bob',
          status: 'ENROLLED',
          modalities: ['FACE', 'VOICE'],
          templateVersion: TEMPLATE_VERSION,
        });
        expect((await get(surface, '/subjects/modality/types?subjectId=dave')).modalities).toEqual(['VOICE']);
        expect((await get(surface, '/subjects/modality/types?subjectId=nobody', 404)).type).toMatch(/\/not-found$/);
        expect((await get(surface, '/subjects/modality/types', 400)).errors[0].field).toBe('query.subjectId');
      }
    });

    it('downloads subjects as a subjects.json attachment without bytes, all or nothing', async () => {
      for (const surface of ['admin', 'root'] as const) {
        const res = await send(
          'GET',
          `${prefixes[surface]}/subjects/download?ids=${seeded.bob!.id},${seeded.alice!.id}`,
        );
        expect(res.status).toBe(200);
        expect(res.headers.get('content-disposition')).toBe('attachment; filename="subjects.json"');
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        const text = await res.text();
        const file = JSON.parse(text);
        expect(file.map((s: { subjectId: string }) => s.subjectId)).toEqual(['bob', 'alice']);
        expect(file[0].voices).toHaveLength(1);
        expect(text).not.toContain(base64(seeded.bob!.template).slice(0, 40));
        expect(text).not.toMatch(/"(template|bytes|audio|data)"/);
      }
      const repeated = await send('GET', `/admin/subjects/download?ids=${seeded.carol!.id}&ids=${seeded.dave!.id}`);
      expect((await repeated.json()).map((s: { subjectId: string }) => s.subjectId)).toEqual(['carol', 'dave']);
      const missing = await send('GET', `/admin/subjects/download?ids=${seeded.bob!.id},999998,999999`);
      expect(missing.status).toBe(404);
      const problem = await missing.json();
      expect(problem.missing).toEqual([999998, 999999]);
      expect(problem.detail).toContain('999998');
      expect((await send('GET', '/admin/subjects/download')).status).toBe(400);
      expect((await send('GET', '/admin/subjects/download?ids=abc')).status).toBe(400);
      expect((await send('GET', `/user/subjects/download?ids=${seeded.bob!.id}`, { auth: USER })).status).toBe(404);
    });

    it('deleteSubject removes a subject with its operations, samples, images, templates and open cases, and the gallery forgets it', async () => {
      const alice = seeded.alice!;
      const bob = seeded.bob!;
      const verify = await seedOperation(db(), 'alice');
      const pending = await seedCase(db(), 'alice', alice.enrollUuid);
      const solved = await seedCase(db(), 'alice', alice.enrollUuid, 'SOLVED');
      const bobBefore = await rowsOf(db(), bob);
      expect(await identifies(alice)).toBe(true);
      expect(await rowsOf(db(), alice)).toMatchObject({
        subjects: 1,
        faceSamples: 2,
        images: 2,
        templates: 1,
        operations: 2,
        openCases: 1,
      });

      const res = await send('DELETE', '/admin/subjects/id/?subjectId=alice');
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ deleted: 1 });
      expect(await rowsOf(db(), alice)).toEqual({
        subjects: 0,
        faceSamples: 0,
        voiceSamples: 0,
        images: 0,
        templates: 0,
        operations: 0,
        openCases: 0,
      });
      // The verification's probe image (owned by no subject) went with its operation; the decisions with their case.
      expect(await db().selectFrom('images').select('id').where('operation_uuid', '=', verify).execute()).toEqual([]);
      expect(
        await db().selectFrom('adjudication_decisions').select('id').where('case_id', '=', pending).execute(),
      ).toEqual([]);
      // A solved case stays: it is the audit of a decision taken.
      expect(await db().selectFrom('adjudication_cases').select('id').where('id', '=', solved).execute()).toHaveLength(
        1,
      );
      expect(await rowsOf(db(), bob)).toEqual(bobBefore);
      expect(await identifies(alice)).toBe(false);
      expect(await identifies(bob)).toBe(true);

      const again = await send('DELETE', '/subjects/id/?subjectId=alice');
      expect(again.status).toBe(404);
      expect((await again.json()).type).toMatch(/\/not-found$/);

      // By internal id, on the root surface.
      const axbxc = seeded.axbxc!;
      expect(await identifies(axbxc)).toBe(true);
      const byId = await send('DELETE', `/subjects/id/?id=${axbxc.id}`);
      expect(await byId.json()).toEqual({ deleted: 1 });
      expect((await rowsOf(db(), axbxc)).subjects).toBe(0);
      expect(await identifies(axbxc)).toBe(false);

      const both = await send('DELETE', '/admin/subjects/id/?subjectId=bob&id=1');
      expect(both.status).toBe(400);
      expect(await both.text()).toMatch(/exactly one of subjectId and id/);
      expect((await send('DELETE', '/admin/subjects/id/')).status).toBe(400);
      expect((await send('DELETE', '/user/subjects/id/?subjectId=bob', { auth: USER })).status).toBe(404);
      expect((await rowsOf(db(), bob)).subjects).toBe(1);
    });

    it('deleteSubjects is all or nothing, naming the unknown subjectIds', async () => {
      const carol = seeded.carol!;
      const dave = seeded.dave!;
      const refused = await send('DELETE', '/admin/subjects', {
        body: { subjectIds: ['carol', 'ghost-1', 'dave', 'ghost-2'] },
      });
      expect(refused.status).toBe(404);
      const problem = await refused.json();
      expect(problem.missing).toEqual(['ghost-1', 'ghost-2']);
      expect(problem.detail).toMatch(/ghost-1.*ghost-2/);
      expect((await rowsOf(db(), carol)).subjects).toBe(1);
      expect((await rowsOf(db(), dave)).subjects).toBe(1);

      const res = await send('DELETE', '/subjects', { body: { subjectIds: ['carol', 'dave', 'carol'] } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ deleted: 2 });
      expect(await rowsOf(db(), carol)).toMatchObject({ subjects: 0, faceSamples: 0, images: 0, operations: 0 });
      expect(await rowsOf(db(), dave)).toMatchObject({ subjects: 0, voiceSamples: 0, operations: 0 });
      expect((await send('DELETE', '/admin/subjects', { body: { subjectIds: [] } })).status).toBe(400);
      expect((await send('DELETE', '/admin/subjects', { body: { ids: [1] } })).status).toBe(400);
      expect((await send('DELETE', '/user/subjects', { body: { subjectIds: ['bob'] }, auth: USER })).status).toBe(404);
    });

    it('deleteSubjectsByUUID deletes the subjects the operations concern, all or nothing', async () => {
      const bob = seeded.bob!;
      const pct = seeded['a%b_c']!;
      const verify = await seedOperation(db(), 'a%b_c');
      const unknown = crypto.randomUUID();
      const identify = await seedOperation(db(), null, 'IDENTIFY');
      const refused = await send('DELETE', '/admin/subjects/delete', {
        body: { uuids: [bob.enrollUuid, unknown, identify] },
      });
      expect(refused.status).toBe(404);
      expect((await refused.json()).missing.sort()).toEqual([unknown, identify].sort());
      expect((await rowsOf(db(), bob)).subjects).toBe(1);
      expect(await identifies(bob)).toBe(true);

      const res = await send('DELETE', '/subjects/delete', { body: { uuids: [bob.enrollUuid, verify] } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ deleted: 2 });
      expect(await rowsOf(db(), bob)).toMatchObject({
        subjects: 0,
        faceSamples: 0,
        voiceSamples: 0,
        images: 0,
        templates: 0,
        operations: 0,
      });
      expect((await rowsOf(db(), pct)).subjects).toBe(0);
      expect(await identifies(bob)).toBe(false);
      expect(await identifies(pct)).toBe(false);
      // The IDENTIFY operation concerned nobody and stays.
      expect(await db().selectFrom('operations').select('id').where('uuid', '=', identify).execute()).toHaveLength(1);
      expect((await send('DELETE', '/admin/subjects/delete', { body: { uuids: ['nope'] } })).status).toBe(400);
    });

    it('clearDb needs a prefix on the user surface, clears by literal prefix with counts per table, and resets the gallery', async () => {
      for (const query of ['', '?prefix=']) {
        const res = await send('DELETE', `/user/subjects/clear-db${query}`, { auth: USER });
        expect(res.status).toBe(400);
        const problem = await res.json();
        expect(problem.errors[0].field).toBe('query.prefix');
      }
      expect((await send('DELETE', '/user/subjects/clear-db?colour=red', { auth: USER })).status).toBe(400);
      const one = seeded['tmp-1']!;
      const two = seeded['tmp-2']!;
      const tmpx = seeded.tmpx!;
      await seedOperation(db(), 'tmp-1');
      await seedCase(db(), 'tmp-2', two.enrollUuid);
      expect(await identifies(one)).toBe(true);

      const res = await send('DELETE', '/user/subjects/clear-db?prefix=tmp-', { auth: USER });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        deleted: 2,
        removed: {
          subjects: 2,
          operations: 3,
          images: 3,
          faceSamples: 2,
          voiceSamples: 1,
          templates: 2,
          adjudicationCases: 1,
        },
      });
      expect(await rowsOf(db(), one)).toMatchObject({ subjects: 0, operations: 0 });
      expect(await rowsOf(db(), two)).toMatchObject({ subjects: 0, openCases: 0 });
      expect((await rowsOf(db(), tmpx)).subjects).toBe(1);
      expect(await identifies(one)).toBe(false);
      expect(await identifies(two)).toBe(false);
      expect(await identifies(tmpx)).toBe(true);

      const none = await send('DELETE', `/admin/subjects/clear-db?prefix=${encodeURIComponent('%')}`);
      expect(await none.json()).toMatchObject({ deleted: 0 });
      expect((await rowsOf(db(), tmpx)).subjects).toBe(1);

      // Many subjects at once: the work goes in chunks, and the counts add up across them.
      const many = Array.from({ length: 1203 }, (_, i) => `bulk-${String(i).padStart(4, '0')}`);
      const rows = await db()
        .insertInto('subjects')
        .values(
          many.map((subjectId) => ({
            subject_id: subjectId,
            status: 'ENROLLED' as const,
            metadata: '{}',
            template_version: TEMPLATE_VERSION,
          })),
        )
        .returning('id')
        .execute();
      await db()
        .insertInto('operations')
        .values(
          many.map((subjectId) => ({
            uuid: crypto.randomUUID(),
            type: 'VERIFY',
            status: 'SUCCESS',
            subject_id: subjectId,
            modalities: '[]',
            candidates: 'null',
            checks: 'null',
            details: 'null',
            duration_ms: 1,
          })),
        )
        .execute();
      await db()
        .insertInto('templates')
        .values(
          rows.map((r) => ({
            subject_ref: r.id,
            modality: 'FACE' as const,
            template_version: TEMPLATE_VERSION,
            data: new Uint8Array([1]),
          })),
        )
        .execute();
      const bulk = await send('DELETE', '/admin/subjects/clear-db?prefix=bulk-');
      expect(await bulk.json()).toEqual({
        deleted: 1203,
        removed: {
          subjects: 1203,
          operations: 1203,
          images: 0,
          faceSamples: 0,
          voiceSamples: 0,
          templates: 1203,
          adjudicationCases: 0,
        },
      });

      // Without a prefix, on the admin and root surfaces: every subject.
      const all = await send('DELETE', '/subjects/clear-db');
      expect(all.status).toBe(200);
      const cleared = await all.json();
      expect(cleared.deleted).toBeGreaterThanOrEqual(1);
      expect((await get('admin', '/subjects/count')).count).toBe(0);
      expect(await db().selectFrom('face_samples').select('id').execute()).toEqual([]);
      expect(await db().selectFrom('templates').select('id').execute()).toEqual([]);
      expect(await identifies(tmpx)).toBe(false);
      expect((await send('DELETE', '/admin/subjects/clear-db')).status).toBe(200);
    });
  });
}
