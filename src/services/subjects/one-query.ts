import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { nameStatement } from '../../db/prepared.js';
import type { Database } from '../../db/tables.js';
import type { SubjectRow, SubjectSamples } from './present.js';

/**
 * A subject read in one query: the subject rows a select names, each with its face samples, voice samples and
 * template summaries as JSON arrays built by the database, as a named prepared statement (one per distinct
 * SQL text: a single subject by each kind of name, a list per filter combination and sort). Before, a read
 * cost four queries (the subject, then one per sample table), each parsed and planned anew.
 *
 * The arrays carry exactly the columns the presenters read (never template or sample bytes), so the answers
 * are built by the same presenters from the same values: dates come back as text with the session's offset
 * and name the same millisecond, `real` columns as JSON numbers with the same digits, and NaN or infinities
 * (checks switched off) as strings, turned back into numbers here.
 */

type Db = Kysely<Database>;
type SubjectsSelect = SelectQueryBuilder<Database & { s: Database['subjects'] }, 's', object>;

/** The samples' JSON, ordered by row id as the sample queries were. PostgreSQL evaluates these after LIMIT. */
const withSamples = (query: SubjectsSelect) =>
  query.selectAll('s').select([
    sql<FaceJson[]>`(select coalesce(json_agg(f order by f.id), '[]'::json) from (
      select id, subject_ref, operation_uuid, image_id, rectangle, yaw, pitch, roll, quality, liveness_score, template_version, created_at
      from face_samples where subject_ref = s.id) f)`.as('faces_json'),
    sql<VoiceJson[]>`(select coalesce(json_agg(v order by v.id), '[]'::json) from (
      select id, subject_ref, operation_uuid, duration_ms, sample_rate, quality, speech_ratio, template_version, created_at
      from voice_samples where subject_ref = s.id) v)`.as('voices_json'),
    sql<TemplateJson[]>`(select coalesce(json_agg(t order by t.id), '[]'::json) from (
      select id, subject_ref, modality, template_version, quality from templates where subject_ref = s.id) t)`.as('templates_json'),
  ]);

/** A `real` as JSON: a number, or the text of NaN / Infinity / -Infinity. */
type Real = number | string | null;
const real = (value: Real): number | null => (typeof value === 'string' ? Number(value) : value);

interface FaceJson {
  id: number; subject_ref: number; operation_uuid: string; image_id: number | null;
  rectangle: { x: number; y: number; width: number; height: number };
  yaw: Real; pitch: Real; roll: Real; quality: Real; liveness_score: Real; template_version: string; created_at: string;
}
interface VoiceJson {
  id: number; subject_ref: number; operation_uuid: string; duration_ms: number; sample_rate: number;
  quality: Real; speech_ratio: Real; template_version: string; created_at: string;
}
interface TemplateJson {
  id: number; subject_ref: number; modality: 'FACE' | 'VOICE'; template_version: string; quality: Real;
}

/** `json` columns arrive parsed from both drivers; text only if a driver was told otherwise. */
const parsed = <T>(value: T[] | string): T[] => (typeof value === 'string' ? (JSON.parse(value) as T[]) : value);

/**
 * Run `query` (a select on `subjects as s` with its filters, order and paging, nothing selected yet) as one
 * statement and answer its rows, in order, with their samples.
 */
export async function subjectsWithSamples(db: Db, query: SubjectsSelect): Promise<{ rows: SubjectRow[]; samples: SubjectSamples }> {
  const compiled = withSamples(query).compile();
  nameStatement(compiled.sql, 'subjects');
  const result = await db.executeQuery<SubjectRow & { faces_json: FaceJson[] | string; voices_json: VoiceJson[] | string; templates_json: TemplateJson[] | string }>(compiled);
  const samples: SubjectSamples = { faces: new Map(), voices: new Map(), templates: new Map() };
  const rows: SubjectRow[] = [];
  for (const { faces_json, voices_json, templates_json, ...row } of result.rows) {
    rows.push(row);
    const faces = parsed(faces_json);
    const voices = parsed(voices_json);
    const templates = parsed(templates_json);
    // As loadSamples grouped them: a subject without samples of a kind has no entry for it.
    if (faces.length) {
      samples.faces.set(row.id, faces.map((f) => ({
        id: f.id, subject_ref: f.subject_ref, operation_uuid: f.operation_uuid, image_id: f.image_id, rectangle: f.rectangle,
        yaw: real(f.yaw), pitch: real(f.pitch), roll: real(f.roll), quality: real(f.quality), liveness_score: real(f.liveness_score),
        template_version: f.template_version, created_at: f.created_at,
      })));
    }
    if (voices.length) {
      samples.voices.set(row.id, voices.map((v) => ({
        id: v.id, subject_ref: v.subject_ref, operation_uuid: v.operation_uuid, duration_ms: v.duration_ms, sample_rate: v.sample_rate,
        quality: real(v.quality), speech_ratio: real(v.speech_ratio), template_version: v.template_version, created_at: v.created_at,
      })));
    }
    if (templates.length) {
      samples.templates.set(row.id, templates.map((t) => ({ subject_ref: t.subject_ref, modality: t.modality, template_version: t.template_version, quality: real(t.quality) })));
    }
  }
  return { rows, samples };
}
