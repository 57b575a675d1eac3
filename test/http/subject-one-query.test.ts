import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { adminAuth, bootForTest, dialects } from '../support/databases.js';
import { seedOperation, seedSubject } from '../support/subject-rows.js';
import { json } from '../../src/db/json.js';
import {
  presentMultimodalSubject,
  presentPage,
  presentSubject,
  type SubjectRow,
} from '../../src/services/subjects/present.js';
import { MultimodalSubject, Subject } from '../../src/schemas/subjects.js';

/**
 * A subject read is one query whose samples the database returns as JSON (src/services/subjects/one-query.ts).
 * Its answers must be byte for byte those of the reads it replaced (the subject row, then one query per sample
 * table, presented and validated the same way), including the values JSON carries differently from the
 * drivers: NaN and infinite `real`s, float4 digits, microseconds, negative zero, subjects with samples of one
 * kind only or none, a template without samples, and odd metadata.
 */

// PostgreSQL too (dialects, not serviceDialects): the JSON the database builds is read back by each driver's own
// parsers (pg's and PGlite's), which differ on exactly the values listed above.
for (const dialect of dialects) {
  describe(`one-query subject reads answer as before on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    const get = async (path: string) => {
      const res = await booted.app.request(path, { headers: { authorization: adminAuth } });
      expect(res.status, path).toBe(200);
      return res.text();
    };
    /** What the four-query read answered for these rows, as the HTTP layer writes it. */
    const before = async (rows: SubjectRow[], multimodal = false) => {
      const presented = multimodal
        ? await presentPage(booted.services.ctx.db, rows, presentMultimodalSubject)
        : await presentPage(booted.services.ctx.db, rows, presentSubject);
      return presented.map((p) => (multimodal ? MultimodalSubject : Subject).parse(p));
    };
    const rowsById = async (ids: number[]) => {
      const rows = await booted.services.ctx.db.selectFrom('subjects').selectAll().where('id', 'in', ids).execute();
      return ids.map((id) => rows.find((r) => r.id === id)!);
    };
    const seeded: { id: number; subjectId: string; enrollUuid: string }[] = [];

    beforeAll(async () => {
      booted = await bootForTest(dialect);
      const db = booted.services.ctx.db;
      const odd = new Date('2026-03-04T05:06:07.089Z');
      seeded.push(await seedSubject(db, { subjectId: 'oq-plain', faces: [80.5, 61.25] }));
      seeded.push(await seedSubject(db, { subjectId: 'oq-voice', faces: [], voices: [0.1234567, 33.3] }));
      seeded.push(
        await seedSubject(db, {
          subjectId: 'oq-both',
          faces: [0.1],
          voices: [12],
          metadata: { a: null, ü: ['x', 1.5e-7, { b: null }], big: 12345678901234 },
          createdAt: odd,
        }),
      );
      seeded.push(await seedSubject(db, { subjectId: 'oq-none', faces: [], voices: [] }));
      seeded.push(await seedSubject(db, { subjectId: 'oq-edge', faces: [90, 70, 50] }));
      const [plain, , , none, edge] = seeded;
      // Checks switched off store NaN; infinities and -0 are legal reals too; microseconds round nowhere.
      const faces = await db
        .selectFrom('face_samples')
        .select('id')
        .where('subject_ref', '=', edge!.id)
        .orderBy('id')
        .execute();
      await sql`update face_samples set quality = 'NaN', liveness_score = 'Infinity', yaw = '-0', pitch = 1.17549435e-38, roll = 3.4028235e38,
        created_at = '2026-01-02 03:04:05.999999+00' where id = ${faces[0]!.id}`.execute(db);
      await sql`update face_samples set quality = '-Infinity', liveness_score = 0.33333334, yaw = null, pitch = null, roll = null,
        created_at = '2026-01-02 03:04:05.0005+00' where id = ${faces[1]!.id}`.execute(db);
      await sql`update voice_samples set speech_ratio = 'NaN', created_at = '1999-12-31 23:59:59.123456+00' where subject_ref = ${seeded[1]!.id}`.execute(
        db,
      );
      // A subject enrolled from a template: a templates row and no sample.
      await db
        .insertInto('templates')
        .values({
          subject_ref: none!.id,
          modality: 'VOICE',
          template_version: 'voice-test-v1',
          data: new Uint8Array([1]),
          quality: Number.NaN,
        })
        .execute();
      await db
        .updateTable('subjects')
        .set({ template_version: null, metadata: json({}) })
        .where('id', '=', plain!.id)
        .execute();
      await db.updateTable('subjects').set({ template_version: null }).where('id', '=', none!.id).execute();
      await seedOperation(db, 'oq-plain');
    });
    afterAll(async () => {
      await booted?.close();
    });

    it('each subject by id, by subjectId and by operation, plain and multimodal', async () => {
      for (const s of seeded) {
        const [row] = await rowsById([s.id]);
        const [expected] = await before([row!]);
        const [expectedMultimodal] = await before([row!], true);
        expect(await get(`/admin/subjects/${s.subjectId}`)).toBe(JSON.stringify(expected));
        expect(await get(`/admin/subjects/id/${s.id}`)).toBe(JSON.stringify(expected));
        expect(await get(`/admin/subjects/operation/${s.enrollUuid}`)).toBe(JSON.stringify(expected));
        expect(await get(`/admin/subjects/multimodal/${s.subjectId}`)).toBe(JSON.stringify(expectedMultimodal));
        expect(await get(`/admin/subjects/multimodal/id/${s.id}`)).toBe(JSON.stringify(expectedMultimodal));
      }
    });

    it('pages in every sort, filtered and not, plain and multimodal', async () => {
      const all = await booted.services.ctx.db.selectFrom('subjects').selectAll().orderBy('id').execute();
      const sorts: [string, (a: SubjectRow, b: SubjectRow) => number][] = [
        ['id,asc', (a, b) => a.id - b.id],
        [
          'subjectId,desc',
          (a, b) => (a.subject_id < b.subject_id ? 1 : a.subject_id > b.subject_id ? -1 : a.id - b.id),
        ],
        ['createdAt,asc', (a, b) => new Date(a.created_at).getTime() - new Date(b.created_at).getTime() || a.id - b.id],
      ];
      for (const [sort, order] of sorts) {
        const rows = [...all].sort(order);
        for (const [page, size] of [
          [0, 20],
          [0, 2],
          [1, 2],
          [5, 2],
        ] as const) {
          const slice = rows.slice(page * size, page * size + size);
          expect(
            await get(`/admin/subjects?page=${page}&size=${size}&sort=${sort}`),
            `${sort} page ${page} size ${size}`,
          ).toBe(JSON.stringify(await before(slice)));
          expect(await get(`/admin/subjects/multimodal?page=${page}&size=${size}&sort=${sort}`)).toBe(
            JSON.stringify(await before(slice, true)),
          );
        }
      }
      const voices = all.filter(
        (r) => r.subject_id === 'oq-voice' || r.subject_id === 'oq-both' || r.subject_id === 'oq-none',
      );
      expect(await get('/admin/subjects?page=0&size=20&modality=VOICE')).toBe(JSON.stringify(await before(voices)));
      expect(await get('/admin/subjects?page=0&size=20&subjectId=oq-e')).toBe(
        JSON.stringify(await before(all.filter((r) => r.subject_id === 'oq-edge'))),
      );
    });
  });
}
