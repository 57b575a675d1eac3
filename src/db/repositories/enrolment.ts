import type { Insertable, Selectable } from 'kysely';
import type { Database } from '../tables.js';
import { asDate, parsedJson } from './decode.js';
import type { Queryable } from './queryable.js';

/**
 * The rows an enrolment writes (services/enrolment/enrol.ts): the subject, its images, face and voice samples,
 * its templates and, for a possible duplicate, a pending adjudication case. The service runs them in its
 * gallery unit of work and holds the deduplication lock; these are the plain statements.
 */

type SubjectRow = Selectable<Database['subjects']>;

/**
 * Insert a subject unless its subjectId is taken (a concurrent enrolment of the same subjectId committed
 * first): the stored row, or undefined when nothing was inserted.
 */
export async function insertSubjectUnlessTaken(
  db: Queryable,
  subject: Insertable<Database['subjects']>,
): Promise<SubjectRow | undefined> {
  const row = await db
    .insertInto('subjects')
    .values(subject)
    .onConflict((oc) => oc.column('subject_id').doNothing())
    .returningAll()
    .executeTakeFirst();
  return (
    row && {
      ...row,
      metadata: parsedJson(row.metadata),
      created_at: asDate(row.created_at),
      updated_at: asDate(row.updated_at),
    }
  );
}

/** Store an image (an ORIGINAL with its bytes, or a TOKEN to be made from one): its id. */
export async function insertImage(db: Queryable, image: Insertable<Database['images']>): Promise<number> {
  const row = await db.insertInto('images').values(image).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** Store a face sample: its id (the gallery names a face template by it). */
export async function insertFaceSample(db: Queryable, sample: Insertable<Database['face_samples']>): Promise<number> {
  const row = await db.insertInto('face_samples').values(sample).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function insertVoiceSample(db: Queryable, sample: Insertable<Database['voice_samples']>): Promise<void> {
  await db.insertInto('voice_samples').values(sample).execute();
}

/** Store one of a subject's templates (its compact FACE template, or its averaged VOICE template): its id. */
export async function insertSubjectTemplate(
  db: Queryable,
  template: Insertable<Database['templates']>,
): Promise<number> {
  const row = await db.insertInto('templates').values(template).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** Open a pending adjudication case for an enrolment that may duplicate its candidates. */
export async function insertAdjudicationCase(
  db: Queryable,
  adjudicationCase: Insertable<Database['adjudication_cases']>,
): Promise<void> {
  await db.insertInto('adjudication_cases').values(adjudicationCase).execute();
}
