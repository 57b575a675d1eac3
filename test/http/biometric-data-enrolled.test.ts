import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unzipSync } from 'fflate';
import { adminAuth, bootForTest, serviceDialects } from '../support/databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { photo } from '../biometrics/helpers.js';
import { decodeImage } from '../../src/biometrics/image/decode.js';

/**
 * The biometric-data and image operations over samples written by the real enrolment service (not seeded
 * rows): proves that the storage contract the two sides share holds, with a real photo and the face engine.
 */

const PHOTO = 'labelled/franck/franck_01829.jpg';
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

afterAll(async () => {
  await closeSharedExtractor();
});

for (const dialect of serviceDialects) {
  describe(`samples stored by createSubject, read back on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    let subject: { id: number; subjectId: string; enrollmentOperationUuid: string; faces: unknown[] };
    const get = (path: string, headers: Record<string, string> = {}) =>
      booted.app.request(path, { headers: { authorization: adminAuth, ...headers } });
    const getJson = async (path: string) => {
      const res = await get(path);
      const text = await res.text();
      expect(res.status, text).toBe(200);
      expect(text).not.toMatch(/"template"\s*:/);
      return JSON.parse(text);
    };

    beforeAll(async () => {
      booted = await bootForTest(dialect, {}, { createExtractor: sharedExtractorFactory() });
      const res = await booted.app.request('/admin/subjects/create', {
        method: 'POST',
        headers: { authorization: adminAuth, 'content-type': 'application/json' },
        body: JSON.stringify({ subjectId: 'franck/../1', faces: [{ image: b64(photo(PHOTO)) }] }),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      subject = await res.json();
    });
    afterAll(async () => {
      await booted?.close();
    });

    it('images and face data of the enrolment answer by UUID and by id, consistent with the subject', async () => {
      const uuid = subject.enrollmentOperationUuid;
      const original = await decodeImage(photo(PHOTO));
      const images = await getJson(`/admin/images/uuid/?uuid=${uuid}`);
      expect(images.map((i: { kind: string; format: string }) => [i.kind, i.format])).toEqual([
        ['ORIGINAL', 'JPEG'],
        ['TOKEN', 'PNG'],
      ]);
      expect(images[0]).toMatchObject({
        subjectId: 'franck/../1',
        uuid,
        width: original.width,
        height: original.height,
        sizeBytes: photo(PHOTO).length,
      });
      const faces = await getJson(`/user/biometric-data/face/uuid/?uuid=${uuid}`);
      expect(faces).toEqual(subject.faces);
      expect(faces[0].imageId).toBe(images[0].id);
      expect(await getJson(`/admin/biometric-data/face/id/?id=${images[0].id}`)).toEqual(faces[0]);
      const operation = await booted.services.ctx.db
        .selectFrom('operations')
        .select('id')
        .where('uuid', '=', uuid)
        .executeTakeFirstOrThrow();
      expect(await getJson(`/images/id/?id=${images[1].id}&operationId=${operation.id}`)).toEqual(images[1]);
    });

    it('the subject download holds the photo byte for byte and a token image that decodes', async () => {
      const res = await get(`/admin/biometric-data/subject/${subject.id}/download`);
      expect(res.status).toBe(200);
      const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
      const manifest = JSON.parse(new TextDecoder().decode(files['manifest.json']));
      const [originalEntry, tokenEntry] = manifest.entries;
      expect(originalEntry.path).toBe(`subjects/franck_1~${subject.id}/original-${originalEntry.imageId}.jpg`);
      expect(Buffer.from(files[originalEntry.path]!).equals(Buffer.from(photo(PHOTO)))).toBe(true);
      expect(tokenEntry).toMatchObject({ kind: 'TOKEN', contentType: 'image/png', subjectId: 'franck/../1' });
      const token = await decodeImage(files[tokenEntry.path]!);
      expect(token.width).toBeGreaterThan(0);
      // No template bytes in the archive: the sample's template is nowhere in any file.
      const sample = await booted.services.ctx.db
        .selectFrom('face_samples')
        .select('template')
        .where('subject_ref', '=', subject.id)
        .executeTakeFirstOrThrow();
      const needle = Buffer.from(sample.template!).subarray(16, 48);
      for (const bytes of Object.values(files)) expect(Buffer.from(bytes).indexOf(needle)).toBe(-1);
    });
  });
}
