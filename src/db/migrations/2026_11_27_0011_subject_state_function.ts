import { sql, type Kysely } from 'kysely';

/**
 * `subject_state(subjects)`: a subject's state as the subject reads send it (src/db/repositories/subjects/
 * with-samples.ts), `[subject row, face samples, voice samples, template summaries]` as one JSON array.
 *
 * Why a function: the reads' statements are named and planned with their values on every execution (the generic
 * plan of `limit $n offset $m` always looks dearer), and with the three sub-selects in their select list a page's
 * planning cost two to four times its execution (docs/read-cost.md, "Sixth step"). A function whose body holds
 * sub-selects is never inlined, so the calling statement plans as a plain index scan, and the body is planned only
 * when a row is not held by the reader (`case when s.revision = any($known) then null else subject_state(s) end`).
 *
 * plpgsql, not sql, by measurement (docs/read-cost.md): plpgsql keeps its statement's plan for the session, where
 * a non-inlined sql function plans its body again in every statement that calls it and sets up an executor per
 * call; with no state held a page of 20 ran in 1.5-2.4 ms (plpgsql) against 2.0-3.1 ms (sql).
 *
 * STABLE, not VOLATILE: a stable function's statements run in the calling statement's snapshot, so the samples it
 * reads are those of the revision the same statement returns (a volatile one would take a fresh snapshot per
 * call under READ COMMITTED). It reads exactly the tables whose triggers move `subjects.revision` (migration
 * 0010). `create or replace`: safe to run again on a database that has it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create or replace function subject_state(s subjects) returns json language plpgsql stable parallel safe as $$
    begin
      return json_build_array(to_json(s),
      (select coalesce(json_agg(f order by f.id), '[]'::json) from (
        select id, subject_ref, operation_uuid, image_id, rectangle, yaw, pitch, roll, quality, liveness_score, template_version, created_at
        from face_samples where subject_ref = s.id) f),
      (select coalesce(json_agg(v order by v.id), '[]'::json) from (
        select id, subject_ref, operation_uuid, duration_ms, sample_rate, quality, speech_ratio, template_version, created_at
        from voice_samples where subject_ref = s.id) v),
      (select coalesce(json_agg(t order by t.id), '[]'::json) from (
        select id, subject_ref, modality, template_version, quality from templates where subject_ref = s.id) t));
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists subject_state(subjects)`.execute(db);
}
