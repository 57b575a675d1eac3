import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, bootForTest, serviceDialects } from '../support/databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { photo } from '../biometrics/helpers.js';

/**
 * The subject reads and deletes over subjects that real enrolment made (createSubject with real photos):
 * what enrolment answered is what the reads show, and a delete takes the subject out of identification.
 */

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

afterAll(async () => {
  await closeSharedExtractor();
});

for (const dialect of serviceDialects) {
  describe(`enrolled subjects read and deleted on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    beforeAll(async () => {
      booted = await bootForTest(dialect, {}, { createExtractor: sharedExtractorFactory() });
    });
    afterAll(async () => {
      await booted?.close();
    });

    const send = (method: string, path: string, body?: unknown) =>
      booted.app.request(path, {
        method,
        headers: { authorization: adminAuth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const db = () => booted.services.ctx.db;

    it('reads back what createSubject stored, and a delete removes it from the database and the gallery', async () => {
      const people = { 'e2e-obama': 'labelled/obama/obama4_crop.jpg', 'e2e-audrey': 'labelled/audrey/audrey_crop.jpg' };
      const created: Record<string, any> = {};
      for (const [subjectId, path] of Object.entries(people)) {
        const res = await send('POST', '/admin/subjects/create', {
          subjectId,
          faces: [{ image: b64(photo(path)) }],
          metadata: { source: 'e2e' },
          options: { deduplicate: false },
        });
        expect(res.status, await res.clone().text()).toBe(201);
        created[subjectId] = await res.json();
      }
      const obama = created['e2e-obama'];
      const read = await (await send('GET', '/admin/subjects/e2e-obama')).json();
      const { candidates: _c, encryptedTemplate: _e, ...stored } = obama;
      expect(read).toEqual(stored);
      const byOperation = await (await send('GET', `/user/subjects/operation/${obama.enrollmentOperationUuid}`)).json();
      expect(byOperation.id).toBe(obama.id);
      const multi = await (await send('GET', `/subjects/multimodal/id/${obama.id}`)).json();
      expect(multi.face).toMatchObject({
        templateVersion: obama.templateVersion,
        quality: obama.faces[0].quality,
        samples: obama.faces,
      });
      const filtered = await (
        await send('GET', `/admin/subjects?metadata=${encodeURIComponent('{"source":"e2e"}')}&sort=subjectId,desc`)
      ).json();
      expect(filtered.map((s: { subjectId: string }) => s.subjectId)).toEqual(['e2e-obama', 'e2e-audrey']);

      const template = (
        await db()
          .selectFrom('face_samples')
          .select('template')
          .where('subject_ref', '=', obama.id)
          .executeTakeFirstOrThrow()
      ).template!;
      const top = async () =>
        (await booted.services.gallery.identify(template, { topK: 5, threshold: 0 }))[0]?.subjectId;
      expect(await top()).toBe('e2e-obama');

      const res = await send('DELETE', '/admin/subjects/delete', { uuids: [obama.enrollmentOperationUuid] });
      expect(await res.json()).toEqual({ deleted: 1 });
      expect(await top()).toBe('e2e-audrey');
      for (const table of ['images', 'face_samples', 'templates'] as const) {
        expect(await db().selectFrom(table).select('id').where('subject_ref', '=', obama.id).execute(), table).toEqual(
          [],
        );
      }
      // Original and token images both went: only the other subject's remain.
      expect(
        await db()
          .selectFrom('images')
          .select('kind')
          .where('operation_uuid', '=', obama.enrollmentOperationUuid)
          .execute(),
      ).toEqual([]);
      expect(await db().selectFrom('operations').select('id').where('subject_id', '=', 'e2e-obama').execute()).toEqual(
        [],
      );
      expect((await send('GET', '/admin/subjects/e2e-obama')).status).toBe(404);
      expect((await (await send('GET', '/admin/subjects/count')).json()).count).toBe(1);

      const cleared = await (await send('DELETE', '/admin/subjects/clear-db?prefix=e2e-')).json();
      expect(cleared.removed).toMatchObject({ subjects: 1, images: 2, faceSamples: 1, templates: 1, operations: 1 });
      expect(await top()).toBeUndefined();
    });
  });
}
