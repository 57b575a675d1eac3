import type { Selectable } from 'kysely';
import type { SubjectsTable } from '../../db/tables.js';
import type { Queryable } from '../../db/repositories/queryable.js';
import { listSampleSummariesOfSubjects } from '../../db/repositories/subjects/samples.js';
import { presentFaceData, presentVoiceData, type FaceDataRow, type VoiceDataRow } from '../biometric-data/present.js';

/**
 * Subjects as the `Subject` and `MultimodalSubject` models show them. The sample queries
 * (db/repositories/subjects/samples.ts) name every column they read and never the template or sample bytes, and the presenters copy named fields only, so no byte of
 * a template, image or recording can reach these JSON answers. Samples of a whole page are loaded with one
 * query per table (face samples, voice samples, templates), never one per subject.
 */

type Db = Queryable;
// The matcher cluster's slot (migration 0012) is no part of what a subject presents.
export type SubjectRow = Omit<Selectable<SubjectsTable>, 'shard_slot'>;
type Modality = 'FACE' | 'VOICE';

/** Sample rows as the biometric-data reads know them, keyed by subject instead of carrying its name. */
type FaceRow = Omit<FaceDataRow, 'subject_id'> & { subject_ref: number | null };
type VoiceRow = Omit<VoiceDataRow, 'subject_id' | 'size'>;

interface TemplateRow {
  subject_ref: number;
  modality: Modality;
  template_version: string;
  quality: number | null;
}

/** The samples and template summaries of a set of subjects, grouped by subject. */
export interface SubjectSamples {
  faces: Map<number, FaceRow[]>;
  voices: Map<number, VoiceRow[]>;
  templates: Map<number, TemplateRow[]>;
}

function groupBy<T extends { subject_ref: number | null }>(rows: T[]): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const row of rows) {
    if (row.subject_ref === null) continue;
    const list = out.get(row.subject_ref);
    if (list) list.push(row);
    else out.set(row.subject_ref, [row]);
  }
  return out;
}

/** Load the samples of these subjects: three queries whatever the page size. */
export async function loadSamples(db: Db, refs: readonly number[]): Promise<SubjectSamples> {
  if (refs.length === 0) return { faces: new Map(), voices: new Map(), templates: new Map() };
  const { faces, voices, templates } = await listSampleSummariesOfSubjects(db, refs);
  return { faces: groupBy(faces as FaceRow[]), voices: groupBy(voices), templates: groupBy(templates) };
}

const iso = (at: Date | string) => new Date(at).toISOString();

/** A measure when it was taken: `real` columns may hold NULL, or NaN when a check was switched off. */
function measured<K extends string>(key: K, value: number | null): { [P in K]?: number } {
  return value !== null && Number.isFinite(value) ? ({ [key]: value } as { [P in K]: number }) : {};
}

/** A subject's samples show as `BiometricFaceData` / `BiometricVoiceData`, exactly as the biometric-data reads show them. */
function presentFace(row: FaceRow, subjectId: string) {
  return presentFaceData({ ...row, subject_id: subjectId });
}

function presentVoice(row: VoiceRow, subjectId: string) {
  return presentVoiceData({ ...row, subject_id: subjectId });
}

/** The modalities a subject holds: from its samples, and from its templates (a subject enrolled from a template has no samples). */
export function modalitiesOf(row: SubjectRow, samples: SubjectSamples): Modality[] {
  const templates = samples.templates.get(row.id) ?? [];
  const out: Modality[] = [];
  if (samples.faces.has(row.id) || templates.some((t) => t.modality === 'FACE')) out.push('FACE');
  if (samples.voices.has(row.id) || templates.some((t) => t.modality === 'VOICE')) out.push('VOICE');
  return out;
}

/** The subject's template version: its own column, else its newest template or sample's. */
export function templateVersionOf(row: SubjectRow, samples: SubjectSamples): string | undefined {
  return (
    row.template_version ??
    samples.templates.get(row.id)?.[0]?.template_version ??
    samples.faces.get(row.id)?.at(-1)?.template_version ??
    samples.voices.get(row.id)?.at(-1)?.template_version
  );
}

function base(row: SubjectRow) {
  return {
    id: row.id,
    subjectId: row.subject_id,
    status: row.status,
    metadata: (typeof row.metadata === 'string' ? JSON.parse(row.metadata) : row.metadata) ?? {},
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    ...(row.enrollment_operation_uuid ? { enrollmentOperationUuid: row.enrollment_operation_uuid } : {}),
  };
}

/** One subject as the `Subject` model. */
export function presentSubject(row: SubjectRow, samples: SubjectSamples) {
  const templateVersion = templateVersionOf(row, samples);
  const { id, subjectId, status, ...rest } = base(row);
  // In the schema's order, so the answer's text is the same whether or not it is checked against the schema.
  return {
    id,
    subjectId,
    status,
    modalities: modalitiesOf(row, samples),
    ...(templateVersion !== undefined ? { templateVersion } : {}),
    ...rest,
    faces: (samples.faces.get(row.id) ?? []).map((f) => presentFace(f, row.subject_id)),
    voices: (samples.voices.get(row.id) ?? []).map((v) => presentVoice(v, row.subject_id)),
  };
}

/**
 * One modality of a multimodal subject: its template version (the stored template's, else the newest
 * sample's), its quality (the best sample's, else the template's) and its samples.
 */
function modalityGroup<T extends { quality: number | null; template_version: string }, P>(
  rows: T[],
  template: TemplateRow | undefined,
  present: (row: T) => P,
) {
  if (rows.length === 0 && !template) return undefined;
  const qualities = rows.map((r) => r.quality).filter((q): q is number => q !== null && Number.isFinite(q));
  const best = qualities.length ? Math.max(...qualities) : (template?.quality ?? null);
  const templateVersion = template?.template_version ?? rows.at(-1)!.template_version;
  return { templateVersion, ...measured('quality', best), samples: rows.map(present) };
}

/** One subject as the `MultimodalSubject` model: the same data grouped by modality. */
export function presentMultimodalSubject(row: SubjectRow, samples: SubjectSamples) {
  const templates = samples.templates.get(row.id) ?? [];
  const face = modalityGroup(
    samples.faces.get(row.id) ?? [],
    templates.find((t) => t.modality === 'FACE'),
    (f) => presentFace(f, row.subject_id),
  );
  const voice = modalityGroup(
    samples.voices.get(row.id) ?? [],
    templates.find((t) => t.modality === 'VOICE'),
    (v) => presentVoice(v, row.subject_id),
  );
  return { ...base(row), ...(face ? { face } : {}), ...(voice ? { voice } : {}) };
}

/** Present a page of subject rows in their order, loading their samples in one query per table. */
export async function presentPage<T>(
  db: Db,
  rows: SubjectRow[],
  present: (row: SubjectRow, samples: SubjectSamples) => T,
): Promise<T[]> {
  const samples = await loadSamples(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((row) => present(row, samples));
}
