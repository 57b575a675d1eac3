// The gallery's repository over both dialects: which templates are the gallery's (face sample templates and
// VOICE templates of ENROLLED subjects only), read in id-ordered batches and per subject; the change log's ids,
// its jsonb subject lists decoded as arrays, its pruning marker; and the database digest, the SQL twin of
// digestTerm, equal to the terms summed in JavaScript.
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../src/db/json.js';
import {
  appendGalleryChange,
  galleryChangesAfter,
  galleryDigestInDatabase,
  galleryFaceTemplatesAfter,
  galleryTemplatesOf,
  galleryVoiceTemplatesAfter,
  holdTransactionLock,
  latestGalleryChangeId,
  notifyGalleryChannel,
  pruneGalleryChanges,
  type GalleryTemplate,
} from '../../src/db/repositories/gallery.js';
import type { Database } from '../../src/db/tables.js';
import { digestTerm } from '../../src/services/gallery/digest.js';
import { dialects } from '../support/databases.js';
import { openMigratedDatabase } from '../support/migrated-database.js';

/** Template-like bytes: the repository stores and returns them as they are; the last four are the "CRC". */
const bytes = (...values: number[]) => Uint8Array.from([1, 2, 3, 4, ...values]);

for (const dialect of dialects) {
  describe(`gallery repository on ${dialect}`, () => {
    let db: Kysely<Database>;
    let close: () => Promise<void>;
    const refs: Record<string, number> = {};

    const subject = async (subjectId: string, status: 'ENROLLED' | 'PENDING_ADJUDICATION') => {
      const row = await db
        .insertInto('subjects')
        .values({
          subject_id: subjectId,
          status,
          metadata: json({}),
          template_version: 'v1',
          enrollment_operation_uuid: null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      refs[subjectId] = row.id;
      return row.id;
    };
    const face = async (subjectRef: number, template: Uint8Array | null) => {
      const row = await db
        .insertInto('face_samples')
        .values({
          subject_ref: subjectRef,
          operation_uuid: crypto.randomUUID(),
          image_id: null,
          rectangle: json({ x: 0, y: 0, width: 1, height: 1 }),
          landmarks: json(null),
          yaw: null,
          pitch: null,
          roll: null,
          quality: null,
          liveness_score: null,
          template_version: 'v1',
          template,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    };
    const stored = async (subjectRef: number, modality: 'FACE' | 'VOICE', data: Uint8Array) => {
      const row = await db
        .insertInto('templates')
        .values({ subject_ref: subjectRef, modality, template_version: 'v1', data, quality: null })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    };

    beforeAll(async () => {
      ({ db, close } = await openMigratedDatabase(dialect));
      const ann = await subject('ann', 'ENROLLED');
      const bob = await subject('bob', 'PENDING_ADJUDICATION');
      const cat = await subject('cat', 'ENROLLED');
      await face(ann, bytes(0xff, 0xff, 0xff, 0xff));
      await face(bob, bytes(9, 9, 9, 9)); // not ENROLLED: not in the gallery
      await face(ann, null); // no template (yet): not in the gallery
      await face(ann, bytes(1, 0, 0, 0));
      await face(cat, bytes(0, 1, 0, 0));
      await stored(cat, 'VOICE', bytes(7, 7, 7, 7));
      await stored(cat, 'FACE', bytes(5, 5, 5, 5)); // a FACE row of `templates` is no gallery template
      await stored(bob, 'VOICE', bytes(6, 6, 6, 6));
    }, 120_000);
    afterAll(async () => close?.());

    it('reads the face templates of ENROLLED subjects in id-ordered batches, decoded into gallery rows', async () => {
      const all: GalleryTemplate[] = [];
      for (let after = 0; ; ) {
        const batch = await galleryFaceTemplatesAfter(db, after, 2);
        all.push(...batch);
        if (batch.length < 2) break;
        after = batch[batch.length - 1]!.rowId;
      }
      expect(all.map((r) => [r.subjectId, r.source])).toEqual([
        ['ann', 'face'],
        ['ann', 'face'],
        ['cat', 'face'],
      ]);
      expect(all.map((r) => r.rowId)).toEqual([...all.map((r) => r.rowId)].sort((a, b) => a - b));
      expect(all[0]).toMatchObject({ subjectRef: refs.ann, subjectId: 'ann' });
      expect(all[0]!.template).toBeInstanceOf(Uint8Array);
      expect([...all[0]!.template]).toEqual([1, 2, 3, 4, 0xff, 0xff, 0xff, 0xff]);
      const voices = await galleryVoiceTemplatesAfter(db, 0, 10);
      expect(voices.map((r) => [r.subjectId, r.source, [...r.template]])).toEqual([
        ['cat', 'voice', [1, 2, 3, 4, 7, 7, 7, 7]],
      ]);
    });

    it('reads the gallery templates of chosen subjects: faces then voices, nothing for a subject outside the gallery', async () => {
      const rows = await galleryTemplatesOf(db, [refs.cat!, refs.bob!, refs.ann!]);
      expect(rows.map((r) => `${r.subjectId}:${r.source}`)).toEqual(['ann:face', 'ann:face', 'cat:face', 'cat:voice']);
      expect(await galleryTemplatesOf(db, [refs.bob!])).toEqual([]);
      expect(await galleryTemplatesOf(db, [])).toEqual([]);
    });

    it('sums the digest in SQL exactly as digestTerm does in JavaScript (terms above 2^53 included)', async () => {
      const rows = [
        ...(await galleryFaceTemplatesAfter(db, 0, 100)),
        ...(await galleryVoiceTemplatesAfter(db, 0, 100)),
      ];
      const sum = rows.reduce((s, r) => s + digestTerm(r.source, r.rowId, r.subjectRef, r.template), 0n);
      expect(await galleryDigestInDatabase(db)).toEqual({ templates: 4, sum: sum.toString() });
    });

    it('appends changes with rising ids, reads their subject lists back as arrays, and prunes behind a marker', async () => {
      expect(await latestGalleryChangeId(db)).toBe(0);
      const appended = [
        await db.transaction().execute((trx) => appendGalleryChange(trx, 'put', [refs.ann!])),
        await db.transaction().execute(async (trx) => {
          const row = await appendGalleryChange(trx, 'remove', [refs.ann!, refs.cat!]);
          await notifyGalleryChannel(trx, 'bims_gallery_test', JSON.stringify({ node: 'test' }));
          await holdTransactionLock(trx, 0x42494d53_0fff);
          return row;
        }),
        await db.transaction().execute((trx) => appendGalleryChange(trx, 'reset', [])),
      ];
      // Each row says which id came before it (what a node applying its own change checks).
      expect(appended.map((a) => a.previous)).toEqual([0, appended[0]!.id, appended[1]!.id]);
      const [first, second, third] = appended.map((a) => a.id) as [number, number, number];
      expect(second).toBeGreaterThan(first);
      expect(await latestGalleryChangeId(db)).toBe(third);
      const changes = await galleryChangesAfter(db, 0, 10);
      expect(changes).toEqual([
        { id: first, kind: 'put', subjectRefs: [refs.ann] },
        { id: second, kind: 'remove', subjectRefs: [refs.ann, refs.cat] },
        { id: third, kind: 'reset', subjectRefs: [] },
      ]);
      expect(await galleryChangesAfter(db, first, 1)).toEqual([changes[1]]);

      // The first two are a day old: the older goes, the newer of them becomes the pruned marker.
      await sql`update gallery_changes set created_at = now() - interval '1 day' - (${third} - id) * interval '1 second' where id < ${third}`.execute(
        db,
      );
      expect(await pruneGalleryChanges(db, 3600_000)).toBe(1);
      expect(await galleryChangesAfter(db, 0, 10)).toEqual([
        { id: second, kind: 'pruned', subjectRefs: [] },
        { id: third, kind: 'reset', subjectRefs: [] },
      ]);
      expect(await pruneGalleryChanges(db, 3600_000)).toBe(0);
    });

    it("answers as an appended row's previous id the last committed one, not the id a rolled-back row drew", async () => {
      const latest = await latestGalleryChangeId(db);
      await expect(
        db.transaction().execute(async (trx) => {
          await appendGalleryChange(trx, 'put', [refs.ann!]);
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      const next = await db.transaction().execute((trx) => appendGalleryChange(trx, 'put', [refs.ann!]));
      expect(next.id).toBeGreaterThan(latest + 1);
      expect(next.previous).toBe(latest);
    });

    it('claims no previous id in a transaction whose snapshot may predate the lock (repeatable read, serializable)', async () => {
      for (const level of ['repeatable read', 'serializable'] as const) {
        const row = await db
          .transaction()
          .setIsolationLevel(level)
          .execute((trx) => appendGalleryChange(trx, 'put', [refs.ann!]));
        expect(row.previous).toBe(-1);
      }
      const latest = await latestGalleryChangeId(db);
      const readCommitted = await db.transaction().execute((trx) => appendGalleryChange(trx, 'put', [refs.ann!]));
      expect(readCommitted.previous).toBe(latest);
    });
  });
}
