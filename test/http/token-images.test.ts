// Token images are made when first read (src/services/biometric-data/token-images.ts): enrolment stores the
// TOKEN row without bytes; image info, downloads and adjudication cases render it, byte for byte the image
// the extraction pipeline makes for that face, and store it once.
import { unzipSync } from 'fflate';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootForTest, serviceDialects } from '../support/databases.js';
import { send } from '../support/http.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { photo } from '../biometrics/helpers.js';
import { decodeImage } from '../../src/biometrics/image/decode.js';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

afterAll(async () => {
  await closeSharedExtractor();
});

for (const dialect of serviceDialects) {
  describe(`token images made on first read, on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    const db = () => booted.services.ctx.db;
    const request = (path: string, method = 'GET', body?: unknown) => send(booted.app, method, path, body);
    const enrol = async (subjectId: string, file: string) => {
      const res = await request('/admin/subjects/create', 'POST', { subjectId, faces: [{ image: b64(photo(file)) }] });
      const body = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(201);
      return body as { id: number; enrollmentOperationUuid: string };
    };
    const tokenRow = (subjectRef: number) =>
      db()
        .selectFrom('images')
        .select(['id', 'bytes', 'source_image_id'])
        .where('subject_ref', '=', subjectRef)
        .where('kind', '=', 'TOKEN')
        .executeTakeFirstOrThrow();
    /** What the extraction pipeline makes for the largest face of the photo (what enrolment stored before). */
    const expectedToken = async (file: string) => {
      const extractor = await booted.services.extractors.get();
      const analysis = await extractor.analyseFace(photo(file), { tokenImage: true, checks: false });
      return Buffer.from(analysis.tokenImage!);
    };

    beforeAll(async () => {
      booted = await bootForTest(dialect, {}, { createExtractor: sharedExtractorFactory() });
    });
    afterAll(async () => {
      await booted?.close();
    });

    it('image info by UUID makes the token image once, the same bytes the pipeline makes, and reports its size', async () => {
      const file = 'labelled/franck/franck_01829.jpg';
      const subject = await enrol('token-info', file);
      const pending = await tokenRow(subject.id);
      expect(pending.bytes).toBeNull();
      const original = await db()
        .selectFrom('images')
        .select('id')
        .where('subject_ref', '=', subject.id)
        .where('kind', '=', 'ORIGINAL')
        .executeTakeFirstOrThrow();
      expect(pending.source_image_id).toBe(original.id);

      const res = await request(`/admin/images/uuid/?uuid=${subject.enrollmentOperationUuid}`);
      expect(res.status).toBe(200);
      const images = (await res.json()) as {
        id: number;
        kind: string;
        format: string;
        width: number;
        height: number;
        sizeBytes: number;
      }[];
      expect(images.map((i) => i.kind)).toEqual(['ORIGINAL', 'TOKEN']);
      const made = await tokenRow(subject.id);
      expect(made.bytes).not.toBeNull();
      expect(images[1]).toMatchObject({
        id: pending.id,
        format: 'PNG',
        width: 240,
        height: 320,
        sizeBytes: made.bytes!.length,
      });
      expect(Buffer.from(made.bytes!).equals(await expectedToken(file))).toBe(true);
      const decoded = await decodeImage(made.bytes!);
      expect([decoded.width, decoded.height]).toEqual([240, 320]);

      // A second read finds it made and changes nothing.
      expect(await (await request(`/admin/images/uuid/?uuid=${subject.enrollmentOperationUuid}`)).json()).toEqual(
        images,
      );
      expect(Buffer.from((await tokenRow(subject.id)).bytes!).equals(Buffer.from(made.bytes!))).toBe(true);
    });

    it('image info by id makes that token image', async () => {
      const subject = await enrol('token-by-id', 'labelled/connery/SeanConnery.jpg');
      const token = await tokenRow(subject.id);
      expect(token.bytes).toBeNull();
      const operation = await db()
        .selectFrom('operations')
        .select('id')
        .where('uuid', '=', subject.enrollmentOperationUuid)
        .executeTakeFirstOrThrow();
      const res = await request(`/admin/images/id/?id=${token.id}&operationId=${operation.id}`);
      expect(res.status).toBe(200);
      const made = await tokenRow(subject.id);
      expect(await res.json()).toMatchObject({ id: token.id, kind: 'TOKEN', sizeBytes: made.bytes!.length });
      expect(made.bytes!.length).toBeGreaterThan(1000);
    });

    it('a subject download makes the missing token images and holds them in the archive and its manifest', async () => {
      const file = 'labelled/cage/cage.jpg';
      const subject = await enrol('token-zip', file);
      expect((await tokenRow(subject.id)).bytes).toBeNull();
      const res = await request(`/admin/biometric-data/subject/${subject.id}/download`);
      expect(res.status).toBe(200);
      const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
      const manifest = JSON.parse(new TextDecoder().decode(files['manifest.json'])) as {
        entries: { kind: string; path: string; size: number }[];
      };
      const token = manifest.entries.find((e) => e.kind === 'TOKEN')!;
      expect(token).toBeDefined();
      expect(Buffer.from(files[token.path]!).equals(await expectedToken(file))).toBe(true);
      expect(token.size).toBe(files[token.path]!.length);
      expect((await tokenRow(subject.id)).bytes).not.toBeNull();
    });

    it('a token image that cannot be made is left out of the read and recorded in the exception log, never a 500', async () => {
      const subject = await enrol('token-broken', 'labelled/obama/obama4_crop.jpg');
      // The face sample's landmarks are what the token is cut by; without them it cannot be made.
      await db()
        .updateTable('face_samples')
        .set({ landmarks: sql<string>`null` })
        .where('subject_ref', '=', subject.id)
        .execute();
      const before = await db().selectFrom('exceptions').select('id').execute();
      const res = await request(`/admin/images/uuid/?uuid=${subject.enrollmentOperationUuid}`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { kind: string }[]).map((i) => i.kind)).toEqual(['ORIGINAL']);
      const after = await db().selectFrom('exceptions').select(['id', 'message', 'operation_id']).execute();
      const added = after.filter((e) => !before.some((b) => b.id === e.id));
      expect(added).toHaveLength(1);
      expect(added[0]).toMatchObject({ operation_id: 'renderTokenImage' });
      expect(added[0]!.message).toMatch(/landmarks/);
      expect((await tokenRow(subject.id)).bytes).toBeNull();
    });

    it('deleting the subject removes its token image with it, made or not', async () => {
      const subject = await enrol('token-delete', 'labelled/franck/franck_04000.jpg');
      const token = await tokenRow(subject.id);
      const res = await request(`/admin/subjects/id/?subjectId=token-delete`, 'DELETE');
      expect(res.status).toBeLessThan(300);
      expect(await db().selectFrom('images').select('id').where('id', '=', token.id).execute()).toEqual([]);
    });
  });
}
