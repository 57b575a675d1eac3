import { CompiledQuery, sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { nameStatement } from '../../db/prepared.js';
import type { Database } from '../../db/tables.js';
import type { SubjectRow, SubjectSamples } from './present.js';
import { accountColumn, type PendingAccountCheck } from '../auth/account-check.js';

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
 * statement and answer its rows, in order, with their samples. A caller's pending account `check` is made by
 * the same statement when it returns rows (401/403 thrown before the rows are used).
 */
export async function subjectsWithSamples(db: Db, query: SubjectsSelect, check?: PendingAccountCheck): Promise<{ rows: SubjectRow[]; samples: SubjectSamples }> {
  // The caller's account check, when it is still to be made, rides along as one more column (account-check.ts).
  const carried = check?.pending ? check : undefined;
  const compiled = compileRead(query, carried && accountColumn(carried.accountId, carried.sid));
  nameStatement(compiled.sql, 'subjects');
  return runRead(db, compiled, carried);
}

/** A value bound when a read compiled once runs ({@link subjectsWithSamplesOfShape}). */
class Slot {
  constructor(readonly name: string) {}
}
const slot = <T>(name: string) => new Slot(name) as unknown as T;
/** Reads compiled once, by shape. */
const compiledShapes = new Map<string, CompiledQuery>();

/**
 * {@link subjectsWithSamples} for a read whose SQL depends on its shape only (a subject by id, say): Kysely
 * builds and compiles it once per shape and process, and each call binds its values. `build` makes the select
 * with `slot(name)` wherever a value goes; `values` holds them by name. Building and compiling cost about as
 * much as the rest of a single subject's read on our side.
 */
export async function subjectsWithSamplesOfShape(
  db: Db,
  shape: string,
  build: (slot: <T>(name: string) => T) => SubjectsSelect,
  values: Record<string, unknown>,
  check?: PendingAccountCheck,
): Promise<{ rows: SubjectRow[]; samples: SubjectSamples }> {
  const carried = check?.pending ? check : undefined;
  const key = carried ? `${shape} checked` : shape;
  let compiled = compiledShapes.get(key);
  if (!compiled) {
    compiled = compileRead(build(slot), carried && accountColumn(slot('caller.accountId'), slot('caller.sid')));
    nameStatement(compiled.sql, 'subjects');
    compiledShapes.set(key, compiled);
  }
  const parameters = compiled.parameters.map((p) => {
    if (!(p instanceof Slot)) return p;
    if (p.name === 'caller.accountId') return carried!.accountId;
    if (p.name === 'caller.sid') return carried!.sid;
    if (!(p.name in values)) throw new Error(`no value for ${p.name} in the read ${shape}`);
    return values[p.name];
  });
  return runRead(db, CompiledQuery.raw(compiled.sql, parameters), carried);
}

function compileRead(query: SubjectsSelect, callerAccount: ReturnType<typeof accountColumn> | undefined): CompiledQuery {
  const select = withSamples(query);
  return (callerAccount ? select.select(callerAccount.as('caller_account')) : select).compile();
}

async function runRead(db: Db, compiled: CompiledQuery, carried: PendingAccountCheck | undefined): Promise<{ rows: SubjectRow[]; samples: SubjectSamples }> {
  const result = await db.executeQuery<SubjectRow & { faces_json: FaceJson[] | string; voices_json: VoiceJson[] | string; templates_json: TemplateJson[] | string; caller_account?: unknown }>(compiled);
  // Judged before anything of the rows is used; without rows it is made on its own (PendingAccountCheck.run).
  if (carried && result.rows.length) carried.settle(result.rows[0]!.caller_account as Parameters<PendingAccountCheck['settle']>[0]);
  const samples: SubjectSamples = { faces: new Map(), voices: new Map(), templates: new Map() };
  const rows: SubjectRow[] = [];
  for (const { faces_json, voices_json, templates_json, caller_account: _, ...row } of result.rows) {
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
