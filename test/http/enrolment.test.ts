import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, bootForTest, serviceDialects } from '../support/databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { photo } from '../biometrics/helpers.js';
import { encodeFaceTemplate } from '../../src/biometrics/template.js';
import { encodePng } from '../../src/biometrics/image/encode.js';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const franck = [
  'labelled/franck/franck_01829.jpg',
  'labelled/franck/franck_04000.jpg',
  'labelled/franck/franck_02683.jpg',
];

afterAll(async () => {
  await closeSharedExtractor();
});

for (const dialect of serviceDialects) {
  describe(`createSubject on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    beforeAll(async () => {
      booted = await bootForTest(dialect, {}, { createExtractor: sharedExtractorFactory() });
    });
    afterAll(async () => {
      await booted?.close();
    });

    const post = (path: string, body: unknown) =>
      booted.app.request(path, {
        method: 'POST',
        headers: { authorization: adminAuth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const enrol = (subjectId: string, images: string[], extra: Record<string, unknown> = {}) =>
      post('/admin/subjects/create', { subjectId, faces: images.map((p) => ({ image: b64(photo(p)) })), ...extra });
    const db = () => booted.services.ctx.db;
    const countRows = async (
      table: 'subjects' | 'images' | 'face_samples' | 'templates' | 'operations' | 'adjudication_cases',
    ) =>
      Number(
        (
          await db()
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    it('enrols a face: subject, samples with templates, original and token images, compact template, ENROLL operation', async () => {
      const res = await enrol('franck-1', [franck[0]!], { metadata: { office: 'north' } });
      expect(res.status).toBe(201);
      const subject = await res.json();
      expect(subject).toMatchObject({
        subjectId: 'franck-1',
        status: 'ENROLLED',
        modalities: ['FACE'],
        metadata: { office: 'north' },
        voices: [],
      });
      expect(subject.templateVersion).toBe((await booted.services.extractors.get()).templateVersion);
      expect(subject.faces).toHaveLength(1);
      expect(subject.faces[0].rectangle.width).toBeGreaterThan(50);
      expect(subject.faces[0].quality).toBeGreaterThan(0);
      expect(JSON.stringify(subject)).not.toMatch(/"template"\s*:/);
      expect(subject.encryptedTemplate).toMatch(/^[\w-]+\.[\w-]*\.[\w-]+\.[\w-]+\.[\w-]+$/);

      const sample = await db()
        .selectFrom('face_samples')
        .selectAll()
        .where('subject_ref', '=', subject.id)
        .executeTakeFirstOrThrow();
      expect(sample.template?.length).toBeGreaterThan(500);
      const images = await db()
        .selectFrom('images')
        .select(['id', 'kind', 'format', 'bytes', 'source_image_id'])
        .where('subject_ref', '=', subject.id)
        .orderBy('kind')
        .execute();
      expect(images.map((i) => [i.kind, i.format])).toEqual([
        ['ORIGINAL', 'JPEG'],
        ['TOKEN', 'PNG'],
      ]);
      expect(Buffer.from(images[0]!.bytes!).equals(Buffer.from(photo(franck[0]!)))).toBe(true);
      // The token image is made when first read (test/http/token-images.test.ts), from this original.
      expect(images[1]).toMatchObject({ bytes: null, source_image_id: images[0]!.id });
      const operation = await db()
        .selectFrom('operations')
        .selectAll()
        .where('uuid', '=', subject.enrollmentOperationUuid)
        .executeTakeFirstOrThrow();
      expect(operation).toMatchObject({
        type: 'ENROLL',
        status: 'SUCCESS',
        subject_id: 'franck-1',
        surface: 'admin',
        account_id: 1,
      });
      expect(
        await db().selectFrom('templates').select('modality').where('subject_ref', '=', subject.id).execute(),
      ).toEqual([{ modality: 'FACE' }]);
    });

    it('hands out an encrypted template at enrolment that remoteVerify accepts with a fresh device template', async () => {
      const enrolled = await (
        await enrol('remote-1', ['labelled/franck/franck_02045.jpg'], { options: { deduplicate: false } })
      ).json();
      const extractor = await booted.services.extractors.get();
      const fresh = async (path: string) => {
        const analysis = await extractor.analyseFace(photo(path), { checks: false });
        return b64(encodeFaceTemplate(extractor.templateVersion, analysis.faces[0]!));
      };
      // Another capture of the same person (the enrolment photo itself would be a replay: test/http/remote-verify-replay.test.ts).
      const genuine = await post('/user/operations/remote-verify', {
        template: await fresh(franck[1]!),
        encryptedTemplate: enrolled.encryptedTemplate,
      });
      expect(genuine.status).toBe(200);
      expect(await genuine.json()).toMatchObject({ verified: true, subjectId: 'remote-1' });
      const impostor = await post('/user/operations/remote-verify', {
        template: await fresh('labelled/obama/obama4_crop.jpg'),
        encryptedTemplate: enrolled.encryptedTemplate,
      });
      expect(await impostor.json()).toMatchObject({ verified: false });
      await booted.app.request('/admin/subjects/id/?subjectId=remote-1', {
        method: 'DELETE',
        headers: { authorization: adminAuth },
      });
    });

    it('rejects another photo of the same person as a duplicate, naming the candidate', async () => {
      const res = await enrol('franck-2', [franck[1]!]);
      expect(res.status).toBe(201);
      const subject = await res.json();
      expect(subject.status).toBe('REJECTED');
      expect(subject.candidates[0]).toMatchObject({ subjectId: 'franck-1', rank: 1 });
      expect(subject.candidates[0].score).toBeGreaterThanOrEqual(72);
      const operation = await db()
        .selectFrom('operations')
        .selectAll()
        .where('uuid', '=', subject.enrollmentOperationUuid)
        .executeTakeFirstOrThrow();
      expect(operation.status).toBe('DUPLICATE_FOUND');
      // A REJECTED subject is not matched against later.
      const probe = await db()
        .selectFrom('face_samples')
        .select('template')
        .where('subject_ref', '=', subject.id)
        .executeTakeFirstOrThrow();
      const matches = await booted.services.gallery.identify(probe.template!, { topK: 10, threshold: 0 });
      expect(matches.map((m) => m.subjectId)).not.toContain('franck-2');
    });

    it('enrols a different person, and sends a possible duplicate to adjudication with a pending case', async () => {
      const other = await enrol('connery-1', [
        'labelled/connery/' +
          (await import('node:fs')).readdirSync(`${import.meta.dirname}/../fixtures/photos/labelled/connery`)[0],
      ]);
      expect((await other.json()).status).toBe('ENROLLED');

      expect(
        (await post('/admin/management/settings', { key: 'deduplication.duplicateThreshold', value: 200 })).status,
      ).toBe(200);
      const res = await enrol('franck-3', [franck[2]!]);
      const subject = await res.json();
      expect(subject.status).toBe('PENDING_ADJUDICATION');
      const cases = await db()
        .selectFrom('adjudication_cases')
        .selectAll()
        .where('operation_uuid', '=', subject.enrollmentOperationUuid)
        .execute();
      expect(cases).toHaveLength(1);
      expect(cases[0]).toMatchObject({ subject_id: 'franck-3', status: 'PENDING' });
      expect((cases[0]!.candidates as { subjectId: string }[])[0]!.subjectId).toBe('franck-1');
      expect((await post('/admin/management/settings/reset', {})).status).toBeLessThan(300);
    });

    it('enrols duplicates on purpose when deduplicate is false, and from an exported template', async () => {
      const res = await enrol('franck-again', [franck[1]!], { options: { deduplicate: false } });
      expect((await res.json()).status).toBe('ENROLLED');
      const template = await db()
        .selectFrom('templates as t')
        .innerJoin('subjects as s', 's.id', 't.subject_ref')
        .select('t.data')
        .where('s.subject_id', '=', 'connery-1')
        .executeTakeFirstOrThrow();
      const fromTemplate = await post('/admin/subjects/create', {
        subjectId: 'from-template',
        template: b64(template.data),
        options: { deduplicate: false },
      });
      expect(fromTemplate.status).toBe(201);
      expect((await fromTemplate.json()).faces).toHaveLength(1);
      const tampered = Uint8Array.from(template.data);
      tampered[tampered.length - 10] ^= 0xff;
      const bad = await post('/admin/subjects/create', { subjectId: 'bad-template', template: b64(tampered) });
      expect(bad.status).toBe(400);
      expect((await bad.json()).errors[0].field).toBe('body.template');
    });

    it('refuses images without exactly one face with 422, storing only the failed operation', async () => {
      const before = {
        subjects: await countRows('subjects'),
        images: await countRows('images'),
        samples: await countRows('face_samples'),
      };
      const blank = encodePng({ width: 64, height: 64, data: new Uint8Array(64 * 64 * 3).fill(128) });
      const none = await post('/admin/subjects/create', { subjectId: 'nobody', faces: [{ image: b64(blank) }] });
      expect(none.status).toBe(422);
      const problem = await none.json();
      expect(problem).toMatchObject({ status: 422, operationStatus: 'NO_FACE_DETECTED' });
      const failed = await db()
        .selectFrom('operations')
        .selectAll()
        .where('uuid', '=', problem.operationUuid)
        .executeTakeFirstOrThrow();
      expect(failed).toMatchObject({ type: 'ENROLL', status: 'NO_FACE_DETECTED', subject_id: 'nobody' });

      const group = await enrol('crowd', ['faceapi/sample1.jpg']);
      expect(group.status).toBe(422);
      const crowd = await group.json();
      expect(crowd.operationStatus).toBe('MULTIPLE_FACES');
      // The refused image's checks say what to fix (pose, eyes, quality); enrolment does not spend the age and
      // gender models, which no gate uses and no sample stores, nor liveness while no gate asks for it.
      expect(crowd.checks.faceCount).toBeGreaterThan(1);
      for (const face of crowd.checks.faces) {
        expect(face).toHaveProperty('yaw');
        expect(face).toHaveProperty('eyesOpen');
        expect(face).not.toHaveProperty('livenessScore');
        expect(face).not.toHaveProperty('estimatedAge');
        expect(face).not.toHaveProperty('gender');
      }

      // All or nothing: a good face followed by a bad one stores nothing.
      const mixed = await post('/admin/subjects/create', {
        subjectId: 'mixed',
        faces: [{ image: b64(photo(franck[0]!)) }, { image: b64(blank) }],
      });
      expect(mixed.status).toBe(422);
      expect({
        subjects: await countRows('subjects'),
        images: await countRows('images'),
        samples: await countRows('face_samples'),
      }).toEqual(before);
    });

    it('measures passive liveness when liveness.mode is PASSIVE or the request sets detectLiveness, and gates on it', async () => {
      const frame = 'labelled/franck/franck_02045.jpg'; // a camera frame with context around the face
      const livenessOf = async (subject: { id: number }) =>
        (
          await db()
            .selectFrom('face_samples')
            .select('liveness_score')
            .where('subject_ref', '=', subject.id)
            .executeTakeFirstOrThrow()
        ).liveness_score;

      // liveness.mode NONE (the default): not measured, not stored, not shown.
      const plain = await enrol('live-none', [frame], { options: { deduplicate: false } });
      expect(plain.status).toBe(201);
      const plainSubject = await plain.json();
      expect(plainSubject.faces[0]).not.toHaveProperty('livenessScore');
      expect(await livenessOf(plainSubject)).toBeNull();

      // Asked for by the request: measured against liveness.threshold (50) and stored.
      const asked = await enrol('live-asked', [frame], { options: { deduplicate: false, detectLiveness: true } });
      expect(asked.status).toBe(201);
      const askedSubject = await asked.json();
      expect(askedSubject.faces[0].livenessScore).toBeGreaterThan(50);
      expect(await livenessOf(askedSubject)).toBeGreaterThan(50);

      // checkIcao refuses any ICAO-style warning, LIVENESS among them: measured too.
      const icao = await enrol('live-icao', [frame], { options: { deduplicate: false, checkIcao: true } });
      expect(icao.status).toBe(201);
      expect(await livenessOf(await icao.json())).toBeGreaterThan(50);

      // liveness.mode PASSIVE: every enrolment is gated; a threshold no capture reaches refuses it, stores
      // nothing and shows the measured score in the refused image's checks.
      await booted.services.settings.set('liveness.mode', 'PASSIVE');
      await booted.services.settings.set('liveness.threshold', 100);
      try {
        const before = { subjects: await countRows('subjects'), samples: await countRows('face_samples') };
        const refused = await enrol('live-refused', [frame], { options: { deduplicate: false } });
        expect(refused.status).toBe(422);
        const problem = await refused.json();
        expect(problem.operationStatus).toBe('LIVENESS_CHECK_FAILED');
        expect(problem.checks.faces[0].livenessScore).toBeGreaterThan(50);
        expect(problem.checks.faces[0].livenessScore).toBeLessThan(100);
        expect({ subjects: await countRows('subjects'), samples: await countRows('face_samples') }).toEqual(before);

        await booted.services.settings.set('liveness.threshold', 0); // measure and store, refuse nobody
        const stored = await enrol('live-passive', [frame], { options: { deduplicate: false } });
        expect(stored.status).toBe(201);
        expect(await livenessOf(await stored.json())).toBeGreaterThan(50);
      } finally {
        await booted.services.settings.set('liveness.mode', null);
        await booted.services.settings.set('liveness.threshold', null);
      }
    });

    it('answers bad input with 4xx problems naming the field, never a 500', async () => {
      const corrupt = await post('/admin/subjects/create', {
        subjectId: 'corrupt',
        faces: [{ image: b64(photo(franck[0]!).subarray(0, 3000)) }],
      });
      expect(corrupt.status).toBe(400);
      expect((await corrupt.json()).errors[0].field).toBe('body.faces.0.image');
      const gif = await post('/admin/subjects/create', {
        subjectId: 'gif',
        faces: [{ image: b64(new TextEncoder().encode('GIF89a not really')) }],
      });
      expect(gif.status).toBe(400);
      const notBase64 = await post('/admin/subjects/create', { subjectId: 'x', faces: [{ image: '***' }] });
      expect(notBase64.status).toBe(400);
      const taken = await enrol('franck-1', [franck[0]!]);
      expect(taken.status).toBe(409);
      // 64 zero bytes are no WAV file: a 400 naming the recording, and no subject.
      const voice = await post('/admin/subjects/create', {
        subjectId: 'voice',
        voices: [{ audio: b64(new Uint8Array(64)) }],
      });
      expect(voice.status).toBe(400);
      expect((await voice.json()).errors[0].field).toBe('body.voices.0.audio');
      const empty = await post('/admin/subjects/create', { subjectId: 'empty' });
      expect(empty.status).toBe(400);
    });

    it('enrols through the user surface too', async () => {
      const res = await booted.app.request('/user/subjects/create', {
        method: 'POST',
        headers: { authorization: adminAuth, 'content-type': 'application/json' },
        body: JSON.stringify({
          subjectId: 'via-user',
          faces: [{ image: b64(photo('labelled/obama/obama4_crop.jpg')) }],
        }),
      });
      expect(res.status).toBe(201);
      const op = await db()
        .selectFrom('operations')
        .select('surface')
        .where('subject_id', '=', 'via-user')
        .executeTakeFirstOrThrow();
      expect(op.surface).toBe('user');
    });
  });
}
