import { sql, type CompiledQuery, type Expression, type Selectable, type SelectQueryBuilder } from 'kysely';
import { nameStatement } from '../../prepared.js';
import type { Database } from '../../tables.js';
import type { Queryable } from '../queryable.js';
import { asDate, parsedJson } from '../decode.js';

/**
 * The subject reads' one statement: the subject rows a select names, each with its revision and, unless the
 * caller already holds that revision, its whole state as one JSON value built by the database: the subject row,
 * its face samples, voice samples and template summaries (exactly the columns the presenters read, never
 * template or sample bytes).
 *
 * A revision (`subjects.revision`, migration 0010) names one state of a subject and its samples, never reused,
 * so "this row's revision is one I hold" means "I hold exactly this state": the statement leaves the state out
 * for those rows (`known`), and the node answers them from memory (services/subjects/read-model.ts). Still one
 * round trip, without the arrays' JSON, their parse and their presentation.
 */

export type SubjectsSelect = SelectQueryBuilder<Database & { s: Database['subjects'] }, 's', object>;
// The matcher cluster's slot (migration 0012) is no part of what a subject read presents.
export type SubjectRow = Omit<Selectable<Database['subjects']>, 'shard_slot'>;

type FaceColumns =
  | 'id'
  | 'subject_ref'
  | 'operation_uuid'
  | 'image_id'
  | 'rectangle'
  | 'yaw'
  | 'pitch'
  | 'roll'
  | 'quality'
  | 'liveness_score'
  | 'template_version'
  | 'created_at';
type VoiceColumns =
  | 'id'
  | 'subject_ref'
  | 'operation_uuid'
  | 'duration_ms'
  | 'sample_rate'
  | 'quality'
  | 'speech_ratio'
  | 'template_version'
  | 'created_at';
/** A face sample as the subject presenters read it. */
type FaceSampleSummary = Pick<Selectable<Database['face_samples']>, FaceColumns>;
/** A voice sample as the subject presenters read it. */
type VoiceSampleSummary = Pick<Selectable<Database['voice_samples']>, VoiceColumns>;
/** A stored template as the subject presenters read it (never its bytes). */
type TemplateSummary = Pick<
  Selectable<Database['templates']>,
  'subject_ref' | 'modality' | 'template_version' | 'quality'
>;

/** Everything a subject's answers are made of, decoded; samples and templates in row-id order. */
export interface SubjectState {
  row: SubjectRow;
  faces: FaceSampleSummary[];
  voices: VoiceSampleSummary[];
  templates: TemplateSummary[];
}

/** One row of the statement: the subject's revision, its state unless it was known, and the extra column if any. */
export interface SubjectStateRow {
  id: number;
  revision: number;
  state: SubjectState | null;
  extra: unknown;
}

/**
 * The state as one JSON array: `[subject, faces, voices, templates]`, built by the database function
 * `subject_state` (migration 2026_11_27_0011): `to_json(s)` is the whole subject row (dates as text with the
 * session's offset, naming the same millisecond the driver's Date would), then the three tables' rows in id order.
 * A function, not the sub-selects written here: the statement is planned on every execution, and a function with
 * sub-selects is not inlined, so its body is planned only for the rows the reader does not hold.
 */
const STATE = sql`subject_state(${sql.ref('p.subject')})`;

/**
 * Compile `query` (a select on `subjects as s` with its filters, order and paging, nothing selected yet) into the
 * read's statement, named for the connections (src/db/prepared.ts). `known` is bound to a PostgreSQL array
 * literal of revisions (`{1,2}`, see {@link knownRevisions}); `extra`, when given, is one more column evaluated
 * once per statement (a caller's account check).
 *
 * The rows are chosen in a sub-select (filters, order, limit, offset) and their states built above it: PostgreSQL
 * evaluates a select list for every row an OFFSET skips, so with the state beside the filters a page at offset
 * 50,000 built 50,020 states (2.8-12 s on PostgreSQL) to send 20. A sub-select with an order or a limit is never
 * merged into the statement around it, and a scan of it keeps its order.
 */
export function compileSubjectStates(
  db: Queryable,
  query: SubjectsSelect,
  known: string,
  extra?: Expression<unknown>,
): CompiledQuery {
  const chosen = query.select(['s.id', 's.revision', sql<unknown>`s`.as('subject')]).as('p');
  const select = db
    .selectFrom(chosen)
    .select(['p.id', 'p.revision'])
    .select(
      sql<unknown>`case when ${sql.ref('p.revision')} = any(cast(${known} as bigint[])) then null else ${STATE} end`.as(
        'state',
      ),
    );
  const compiled = (extra ? select.select(sql<unknown>`${extra}`.as('extra')) : select).compile();
  nameStatement(compiled.sql, 'subjects');
  return compiled;
}

/** The value of `known`: revisions as a PostgreSQL array literal (text is the one form both drivers pass alike). */
export function knownRevisions(revisions: Iterable<number>): string {
  return `{${[...revisions].join(',')}}`;
}

/**
 * Subject names (ids, or subjectIds of any text) as a PostgreSQL array literal: each text quoted, its `\` and `"`
 * escaped, so a name with commas, braces, quotes or spaces stays one element.
 */
export function namesArray(names: readonly (string | number)[]): string {
  return `{${names.map((n) => (typeof n === 'number' ? String(n) : `"${n.replace(/[\\"]/g, '\\$&')}"`)).join(',')}}`;
}

/** A `real` as JSON gives it: a number, or the text of NaN / Infinity / -Infinity. */
type Real = number | string | null;
const real = (value: Real): number | null => (typeof value === 'string' ? Number(value) : value);

/** A row as JSON gives it: dates as text, `real` columns (`R`) as {@link Real}. */
type Json<T, R extends keyof T = never> = { [K in keyof T]: K extends R ? Real : T[K] extends Date ? string : T[K] };

/** Run a statement made by {@link compileSubjectStates} (with its values bound) and decode its rows, in order. */
export async function readSubjectStates(db: Queryable, compiled: CompiledQuery): Promise<SubjectStateRow[]> {
  const { rows } = await db.executeQuery<{ id: number; revision: number | string; state: unknown; extra?: unknown }>(
    compiled,
  );
  return rows.map((r) => ({
    id: r.id,
    revision: Number(r.revision),
    state: r.state === null ? null : decodeState(r.state),
    extra: r.extra,
  }));
}

function decodeState(value: unknown): SubjectState {
  const [row, faces, voices, templates] = parsedJson(
    value as
      | [
          Json<SubjectRow>,
          Json<FaceSampleSummary, 'yaw' | 'pitch' | 'roll' | 'quality' | 'liveness_score'>[],
          Json<VoiceSampleSummary, 'quality' | 'speech_ratio'>[],
          Json<TemplateSummary, 'quality'>[],
        ]
      | string,
  );
  return {
    row: {
      id: row.id,
      subject_id: row.subject_id,
      status: row.status,
      metadata: parsedJson(row.metadata),
      template_version: row.template_version,
      enrollment_operation_uuid: row.enrollment_operation_uuid,
      created_at: asDate(row.created_at),
      updated_at: asDate(row.updated_at),
      revision: Number(row.revision),
    },
    faces: faces.map((f) => ({
      id: f.id,
      subject_ref: f.subject_ref,
      operation_uuid: f.operation_uuid,
      image_id: f.image_id,
      rectangle: parsedJson(f.rectangle),
      yaw: real(f.yaw),
      pitch: real(f.pitch),
      roll: real(f.roll),
      quality: real(f.quality),
      liveness_score: real(f.liveness_score),
      template_version: f.template_version,
      created_at: asDate(f.created_at),
    })),
    voices: voices.map((v) => ({
      id: v.id,
      subject_ref: v.subject_ref,
      operation_uuid: v.operation_uuid,
      duration_ms: Number(v.duration_ms),
      sample_rate: Number(v.sample_rate),
      quality: real(v.quality),
      speech_ratio: real(v.speech_ratio),
      template_version: v.template_version,
      created_at: asDate(v.created_at),
    })),
    templates: templates.map((t) => ({
      subject_ref: t.subject_ref,
      modality: t.modality,
      template_version: t.template_version,
      quality: real(t.quality),
    })),
  };
}
