// Migration 2026_11_27_0011: the subject reads' state built by the database function `subject_state` is byte for
// byte what the statement's own sub-selects made before it (the expression below is the one it replaced), on
// both dialects, and the migration can run again on a database that already has the function.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { bootForTest, dialects } from '../support/databases.js';
import type { Database } from '../../src/db/tables.js';
import * as subjectStateFunction from '../../src/db/migrations/2026_11_27_0011_subject_state_function.js';

/** The state as the reads' statement built it inline before the migration. */
const INLINE = sql<string>`json_build_array(to_json(s),
  (select coalesce(json_agg(f order by f.id), '[]'::json) from (
    select id, subject_ref, operation_uuid, image_id, rectangle, yaw, pitch, roll, quality, liveness_score, template_version, created_at
    from face_samples where subject_ref = s.id) f),
  (select coalesce(json_agg(v order by v.id), '[]'::json) from (
    select id, subject_ref, operation_uuid, duration_ms, sample_rate, quality, speech_ratio, template_version, created_at
    from voice_samples where subject_ref = s.id) v),
  (select coalesce(json_agg(t order by t.id), '[]'::json) from (
    select id, subject_ref, modality, template_version, quality from templates where subject_ref = s.id) t))::text`;

for (const dialect of dialects)
  describe(`subject_state on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    let db: Kysely<Database>;
    let ids: number[] = [];
    beforeAll(async () => {
      booted = await bootForTest(dialect);
      db = booted.services.ctx.db;
      const { rows } = await sql<{
        id: number;
      }>`insert into subjects (subject_id, status, metadata, template_version, created_at, updated_at)
        values ('state-full', 'ENROLLED', '{"z": 1, "a": [1.50, "x"], "n": null}', 'v1', '2026-01-02 03:04:05.123456+00', now()),
               ('state-empty', 'PENDING_ADJUDICATION', '{}', null, now(), now())
        returning id`.execute(db);
      ids = rows.map((r) => r.id);
      const full = ids[0]!;
      await sql`insert into face_samples (subject_ref, operation_uuid, rectangle, yaw, pitch, roll, quality, liveness_score, template_version, created_at)
        values (${full}, gen_random_uuid(), '{"x": 1, "y": 2.5, "width": 3, "height": 4}', 'NaN', 'Infinity', '-Infinity', 0.1, null, 'v1', '2026-01-02 03:04:05.000001+00'),
               (${full}, gen_random_uuid(), '{"x": 0, "y": 0, "width": 1e3, "height": 1}', 1.17549435e-38, -0.0, 3.4028235e38, 0.33333334, 0.99, 'v1', now())`.execute(
        db,
      );
      await sql`insert into voice_samples (subject_ref, operation_uuid, audio, duration_ms, sample_rate, quality, speech_ratio, template_version)
        values (${full}, gen_random_uuid(), '\\x00', 1500, 16000, 'NaN', 0.5, 'v2')`.execute(db);
      await sql`insert into templates (subject_ref, modality, template_version, data, quality)
        values (${full}, 'FACE', 'v1', '\\x01', 0.7), (${full}, 'VOICE', 'v2', '\\x02', null)`.execute(db);
    });
    afterAll(async () => {
      await booted?.close();
    });

    async function both() {
      const { rows } = await sql<{
        inline: string;
        fn: string;
      }>`select ${INLINE} as inline, subject_state(s)::text as fn
        from subjects s where s.id in (${sql.join(ids)}) order by s.id`.execute(db);
      return rows;
    }

    it('makes the same JSON text as the inline sub-selects, with and without samples', async () => {
      const rows = await both();
      expect(rows).toHaveLength(2);
      for (const r of rows) expect(r.fn).toBe(r.inline);
      // Not two empty answers: the full subject carries its two faces, its voice and its two templates.
      const [, faces, voices, templates] = JSON.parse(rows[0]!.fn);
      expect([faces.length, voices.length, templates.length]).toEqual([2, 1, 2]);
      expect(faces[0].yaw).toBe('NaN');
    });

    it('runs again on a database that has it, and down then up restores it', async () => {
      await subjectStateFunction.up(db);
      for (const r of await both()) expect(r.fn).toBe(r.inline);
      await subjectStateFunction.down(db);
      await expect(sql`select subject_state(s) from subjects s`.execute(db)).rejects.toThrow();
      await subjectStateFunction.up(db);
      for (const r of await both()) expect(r.fn).toBe(r.inline);
    });
  });
