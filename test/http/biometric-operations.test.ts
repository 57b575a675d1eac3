import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, bootForTest, serviceDialects } from '../support/databases.js';
import { closeSharedExtractor, realExtractorFactory } from '../support/extractor.js';
import { PHOTOS, photo } from '../biometrics/helpers.js';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const first = (person: string) => `labelled/${person}/${readdirSync(`${PHOTOS}labelled/${person}`).sort()[0]}`;
const franck = [
  'labelled/franck/franck_01829.jpg',
  'labelled/franck/franck_04000.jpg',
  'labelled/franck/franck_03909.jpg',
];

afterAll(async () => {
  await closeSharedExtractor();
});

for (const dialect of serviceDialects) {
  describe(`VERIFY, IDENTIFY, CHECK and checkImage on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    const post = (path: string, body: unknown) =>
      booted.app.request(path, {
        method: 'POST',
        headers: { authorization: adminAuth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const operate = async (body: Record<string, unknown>, expected = 201) => {
      const res = await post('/admin/operations/create', body);
      const json = await res.json();
      expect(res.status, JSON.stringify(json)).toBe(expected);
      return json;
    };

    beforeAll(async () => {
      // The real pool, not recordings: the one HTTP suite that enrols, verifies and identifies end to end on the
      // models themselves (the others replay their answers: test/support/recorded-extractor.ts).
      booted = await bootForTest(dialect, {}, { createExtractor: realExtractorFactory() });
      for (const [subjectId, image] of [
        ['franck-1', franck[0]!],
        ['connery-1', first('connery')],
        ['obama-1', first('obama')],
      ] as const) {
        const res = await post('/admin/subjects/create', { subjectId, faces: [{ image: b64(photo(image)) }] });
        expect((await res.json()).status).toBe('ENROLLED');
      }
    });
    afterAll(async () => {
      await booted?.close();
    });

    it('VERIFY accepts another photo of the enrolled person and refuses someone else', async () => {
      const same = await operate({ type: 'VERIFY', subjectId: 'franck-1', faces: [{ image: b64(photo(franck[1]!)) }] });
      expect(same).toMatchObject({
        type: 'VERIFY',
        status: 'SUCCESS',
        subjectId: 'franck-1',
        threshold: 48,
        modalities: ['FACE'],
      });
      expect(same.score).toBeGreaterThanOrEqual(48);
      const other = await operate({
        type: 'VERIFY',
        subjectId: 'franck-1',
        faces: [{ image: b64(photo(first('obama'))) }],
      });
      expect(other.status).toBe('MATCH_NOT_FOUND');
      expect(other.score).toBeLessThan(48);
      // The probe image is kept under the operation, tied to no subject.
      const probe = await booted.services.ctx.db
        .selectFrom('images')
        .select(['subject_ref', 'kind'])
        .where('operation_uuid', '=', same.uuid)
        .execute();
      expect(probe).toEqual([{ subject_ref: null, kind: 'ORIGINAL' }]);
      const stored = await booted.services.ctx.db
        .selectFrom('operations')
        .selectAll()
        .where('uuid', '=', same.uuid)
        .executeTakeFirstOrThrow();
      expect(stored.score).toBe(same.score);
    });

    it('VERIFY takes a per-operation threshold, and answers 404 for an unknown subject', async () => {
      const strict = await operate({
        type: 'VERIFY',
        subjectId: 'franck-1',
        faces: [{ image: b64(photo(franck[1]!)) }],
        options: { threshold: 200 },
      });
      expect(strict).toMatchObject({ status: 'MATCH_NOT_FOUND', threshold: 200 });
      const res = await post('/admin/operations/create', {
        type: 'VERIFY',
        subjectId: 'nobody',
        faces: [{ image: b64(photo(franck[1]!)) }],
      });
      expect(res.status).toBe(404);
    });

    it('IDENTIFY finds the enrolled person first, and nobody for a stranger', async () => {
      const found = await operate({ type: 'IDENTIFY', faces: [{ image: b64(photo(franck[2]!)) }] });
      expect(found.status).toBe('SUCCESS');
      expect(found.candidates[0]).toMatchObject({ subjectId: 'franck-1', rank: 1 });
      expect(found.candidates.every((c: { score: number }) => c.score >= 48)).toBe(true);
      const stranger = await operate({ type: 'IDENTIFY', faces: [{ image: b64(photo(first('clooney'))) }] });
      expect(stranger).toMatchObject({ status: 'MATCH_NOT_FOUND', candidates: [] });
      const all = await operate({
        type: 'IDENTIFY',
        faces: [{ image: b64(photo(franck[2]!)) }],
        options: { threshold: 0, maxCandidates: 2 },
      });
      expect(all.candidates).toHaveLength(2);
    });

    it('records a refused probe as an operation with the reason in its status', async () => {
      const crowd = await operate({ type: 'IDENTIFY', faces: [{ image: b64(photo('faceapi/sample1.jpg')) }] });
      expect(crowd.status).toBe('MULTIPLE_FACES');
      expect(crowd.checks.faceCount).toBeGreaterThan(1);
      expect(crowd.checks.passed).toBe(false);
    });

    it('CHECK reports the checks and keeps no template or image', async () => {
      const ok = await operate({ type: 'CHECK', faces: [{ image: b64(photo(franck[0]!)) }] });
      expect(ok.status).toBe('SUCCESS');
      expect(ok.checks).toMatchObject({ faceCount: 1, passed: true });
      expect(ok.checks.faces[0].landmarks).toHaveLength(5);
      expect(ok.checks.faces[0].estimatedAge).toBeGreaterThan(15);
      expect(['MALE', 'FEMALE']).toContain(ok.checks.faces[0].gender);
      const images = await booted.services.ctx.db
        .selectFrom('images')
        .select('id')
        .where('operation_uuid', '=', ok.uuid)
        .execute();
      expect(images).toEqual([]);
    });

    it('checkImage answers ChecksFromImage without storing anything', async () => {
      const before = await booted.services.ctx.db
        .selectFrom('operations')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      const res = await post('/admin/operations/checkimage', { image: b64(photo(franck[0]!)) });
      expect(res.status).toBe(200);
      const checks = await res.json();
      expect(checks.faceCount).toBe(1);
      const face = checks.faces[0];
      for (const key of [
        'rectangle',
        'yaw',
        'pitch',
        'roll',
        'eyesOpen',
        'livenessScore',
        'quality',
        'sharpness',
        'brightness',
        'estimatedAge',
        'gender',
        'icaoWarnings',
      ])
        expect(face).toHaveProperty(key);
      expect(face.eyesOpen.left).toBeGreaterThan(50);
      const group = await (await post('/operations/checkimage', { image: b64(photo('faceapi/sample1.jpg')) })).json();
      expect(group).toMatchObject({ passed: false });
      expect(group.faceCount).toBeGreaterThan(1);
      const after = await booted.services.ctx.db
        .selectFrom('operations')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      expect(Number(after.n)).toBe(Number(before.n));
      const corrupt = await post('/admin/operations/checkimage', { image: b64(photo(franck[0]!).subarray(0, 2000)) });
      expect(corrupt.status).toBe(400);
      expect((await corrupt.json()).errors[0].field).toBe('body.image');
    });
  });
}
