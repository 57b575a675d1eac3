import type { ExpressionBuilder, Updateable } from 'kysely';
import type { Database } from '../tables.js';
import { parsedJson } from './decode.js';
import type { Queryable } from './queryable.js';

/**
 * The SQL of re-extraction (services/reextract): finding the subjects whose templates are of another version
 * than the current models make, reading what a subject's samples are re-extracted from, and writing the new
 * templates back. The service holds the transaction; these functions run in it when given one.
 */

/** The versions the current extractor makes: a subject with any template of another is outdated. */
interface CurrentVersions {
  face: string;
  voice: string;
}

/** A subject is outdated when its face or its voice templates are: re-extraction redoes both. */
const outdated = (current: CurrentVersions) => (eb: ExpressionBuilder<Database, 'subjects'>) =>
  eb.or([
    eb('subjects.template_version', '<>', current.face),
    eb.exists(
      eb
        .selectFrom('face_samples')
        .select('face_samples.id')
        .whereRef('face_samples.subject_ref', '=', 'subjects.id')
        .where('face_samples.template_version', '<>', current.face),
    ),
    eb.exists(
      eb
        .selectFrom('voice_samples')
        .select('voice_samples.id')
        .whereRef('voice_samples.subject_ref', '=', 'subjects.id')
        .where('voice_samples.template_version', '<>', current.voice),
    ),
  ]);

/** How many subjects are outdated, by their current template version (null: a subject without one). */
export async function countOutdatedSubjectsByVersion(
  db: Queryable,
  current: CurrentVersions,
): Promise<{ templateVersion: string | null; count: number }[]> {
  const rows = await db
    .selectFrom('subjects')
    .select((eb) => ['template_version', eb.fn.countAll<string>().as('n')])
    .where(outdated(current))
    .groupBy('template_version')
    .execute();
  return rows.map((r) => ({ templateVersion: r.template_version, count: Number(r.n) }));
}

/** The next outdated subjects after the id `afterId`, in id order: the job's cursor. */
export function listOutdatedSubjectsAfter(
  db: Queryable,
  current: CurrentVersions,
  afterId: number,
  limit: number,
): Promise<{ id: number; subject_id: string }[]> {
  return db
    .selectFrom('subjects')
    .select(['id', 'subject_id'])
    .where(outdated(current))
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * The subject's row locked until the commit (FOR UPDATE): it may have been deleted while its images were
 * analysed, and must not be while its templates are rewritten.
 */
export function lockSubjectForUpdate(
  db: Queryable,
  subjectRef: number,
): Promise<{ id: number; status: 'ENROLLED' | 'PENDING_ADJUDICATION' | 'REJECTED' } | undefined> {
  return db.selectFrom('subjects').select(['id', 'status']).where('id', '=', subjectRef).forUpdate().executeTakeFirst();
}

/** The subject's template version after its templates were rewritten. */
export async function setSubjectTemplateVersion(
  db: Queryable,
  subjectRef: number,
  version: string,
  at: Date,
): Promise<void> {
  await db
    .updateTable('subjects')
    .set({ template_version: version, updated_at: at })
    .where('id', '=', subjectRef)
    .execute();
}

/** A stored face sample as re-extraction reads it: its box (decoded) to pick the same face again, and its template. */
export interface StoredFaceSample {
  id: number;
  image_id: number | null;
  rectangle: { x: number; y: number; width: number; height: number } | null;
  template_version: string;
  template: Uint8Array | null;
}

/** Every face sample of a subject, in id order. */
export async function listStoredFaceSamples(db: Queryable, subjectRef: number): Promise<StoredFaceSample[]> {
  const rows = await db
    .selectFrom('face_samples')
    .select(['id', 'image_id', 'rectangle', 'template_version', 'template'])
    .where('subject_ref', '=', subjectRef)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ ...r, rectangle: r.rectangle === null ? null : parsedJson(r.rectangle) }));
}

/** The bytes of these ORIGINAL images, by image id (any other kind, or a missing one, is absent). */
export async function loadOriginalImages(
  db: Queryable,
  imageIds: readonly number[],
): Promise<Map<number, Uint8Array | null>> {
  if (imageIds.length === 0) return new Map();
  const images = await db
    .selectFrom('images')
    .select(['id', 'bytes'])
    .where('id', 'in', [...imageIds])
    .where('kind', '=', 'ORIGINAL')
    .execute();
  return new Map(images.map((i) => [i.id, i.bytes]));
}

/** A face sample's new template and measures, only if the sample is still the subject's. */
export async function updateFaceSample(
  db: Queryable,
  subjectRef: number,
  sampleId: number,
  values: Updateable<Database['face_samples']>,
): Promise<void> {
  await db
    .updateTable('face_samples')
    .set(values)
    .where('id', '=', sampleId)
    .where('subject_ref', '=', subjectRef)
    .execute();
}

/** Every recording of a subject (id and audio), in id order. */
export function listStoredVoiceSamples(
  db: Queryable,
  subjectRef: number,
): Promise<{ id: number; audio: Uint8Array }[]> {
  return db
    .selectFrom('voice_samples')
    .select(['id', 'audio'])
    .where('subject_ref', '=', subjectRef)
    .orderBy('id')
    .execute();
}

/** A voice sample's new template and measures, only if the sample is still the subject's. */
export async function updateVoiceSample(
  db: Queryable,
  subjectRef: number,
  sampleId: number,
  values: Updateable<Database['voice_samples']>,
): Promise<void> {
  await db
    .updateTable('voice_samples')
    .set(values)
    .where('id', '=', sampleId)
    .where('subject_ref', '=', subjectRef)
    .execute();
}

/** The subject's template of a modality becomes these values: its row updated, or inserted when it has none. */
export async function replaceSubjectTemplate(
  db: Queryable,
  subjectRef: number,
  modality: 'FACE' | 'VOICE',
  values: { template_version: string; data: Uint8Array; quality: number | null },
  at: Date,
): Promise<void> {
  const updated = await db
    .updateTable('templates')
    .set(values)
    .where('subject_ref', '=', subjectRef)
    .where('modality', '=', modality)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) {
    await db
      .insertInto('templates')
      .values({ subject_ref: subjectRef, modality, ...values, created_at: at })
      .execute();
  }
}
