// The data migrations of issue 20 on rows as the service left them before: ENROLL operations still
// PENDING_ADJUDICATION after their case ended, and token images rendered with smeared edges.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { bootForTest, dialects } from '../support/databases.js';
import { json } from '../../src/db/json.js';
import type { Database } from '../../src/db/tables.js';
import * as enrolOperations from '../../src/db/migrations/2026_11_26_0007_enrol_operations_follow_cases.js';
import * as tokenImages from '../../src/db/migrations/2026_11_26_0008_grey_padded_token_images.js';

for (const dialect of dialects)
  describe(`data migrations on rows left by the earlier rules, on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    let db: Kysely<Database>;
    beforeAll(async () => {
      booted = await bootForTest(dialect);
      db = booted.services.ctx.db;
    });
    afterAll(async () => {
      await booted?.close();
    });

    const now = new Date();
    async function enrolment(
      subjectId: string,
      subjectStatus: 'ENROLLED' | 'REJECTED' | 'PENDING_ADJUDICATION' | null,
      type = 'ENROLL',
    ) {
      const uuid = crypto.randomUUID();
      await db
        .insertInto('operations')
        .values({
          uuid,
          type: type as 'ENROLL',
          status: 'PENDING_ADJUDICATION',
          subject_id: subjectId,
          modalities: json(['FACE']),
          score: 90,
          threshold: 48,
          candidates: json([]),
          checks: json(null),
          details: json(null),
          duration_ms: 1,
          account_id: null,
          surface: 'admin',
          created_at: now,
        })
        .execute();
      if (subjectStatus) {
        await db
          .insertInto('subjects')
          .values({
            subject_id: subjectId,
            status: subjectStatus,
            metadata: json({}),
            template_version: null,
            enrollment_operation_uuid: uuid,
            created_at: now,
            updated_at: now,
          })
          .execute();
      }
      return uuid;
    }
    const caseOf = (
      uuid: string,
      subjectId: string,
      status: 'PENDING' | 'SOLVED',
      outcome: 'DUPLICATE' | 'NOT_DUPLICATE' | null,
    ) =>
      db
        .insertInto('adjudication_cases')
        .values({
          operation_uuid: uuid,
          subject_id: subjectId,
          candidates: json([]),
          status,
          outcome,
          solved_at: outcome ? now : null,
          created_at: now,
        })
        .execute();
    const statusOf = async (uuid: string) =>
      (await db.selectFrom('operations').select('status').where('uuid', '=', uuid).executeTakeFirstOrThrow()).status;

    it('ENROLL operations take the outcome of their ended adjudication; those still pending keep waiting', async () => {
      const enrolled = await enrolment('m-enrolled', 'ENROLLED'); // solved NOT_DUPLICATE, case deleted since
      const rejected = await enrolment('m-rejected', 'REJECTED'); // solved DUPLICATE or pending store cleared
      const orphan = await enrolment('m-orphan', null); // probe deleted since; its solved case remains
      await caseOf(orphan, 'm-orphan', 'SOLVED', 'DUPLICATE');
      const waiting = await enrolment('m-waiting', 'PENDING_ADJUDICATION');
      await caseOf(waiting, 'm-waiting', 'PENDING', null);
      const notEnrol = await enrolment('m-other', 'ENROLLED', 'REEXTRACT');

      await enrolOperations.up(db);
      expect(await statusOf(enrolled)).toBe('SUCCESS');
      expect(await statusOf(rejected)).toBe('DUPLICATE_FOUND');
      expect(await statusOf(orphan)).toBe('DUPLICATE_FOUND');
      expect(await statusOf(waiting)).toBe('PENDING_ADJUDICATION');
      expect(await statusOf(notEnrol)).toBe('PENDING_ADJUDICATION');
    });

    it('token images that name their original are rendered again; older ones and originals keep their bytes', async () => {
      const image = (kind: 'ORIGINAL' | 'TOKEN', source: number | null) =>
        db
          .insertInto('images')
          .values({
            operation_uuid: crypto.randomUUID(),
            subject_ref: null,
            kind,
            format: 'png',
            width: 2,
            height: 2,
            bytes: new Uint8Array([1, 2, 3]),
            source_image_id: source,
            created_at: now,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
      const original = await image('ORIGINAL', null);
      const lazy = await image('TOKEN', original.id);
      const early = await image('TOKEN', null);

      await tokenImages.up(db);
      const bytes = async (id: number) =>
        (await db.selectFrom('images').select('bytes').where('id', '=', id).executeTakeFirstOrThrow()).bytes;
      expect(await bytes(lazy.id)).toBeNull();
      expect(Array.from((await bytes(early.id))!)).toEqual([1, 2, 3]);
      expect(Array.from((await bytes(original.id))!)).toEqual([1, 2, 3]);
    });
  });
