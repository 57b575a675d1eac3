import type { Queryable } from '../queryable.js';

/**
 * The samples and template summaries of a set of subjects, one query per table whatever their number (never
 * one per subject). Each query names every column it reads and never the template or sample bytes, so no byte
 * of a template, image or recording can reach the subject answers.
 */
export async function listSampleSummariesOfSubjects(db: Queryable, refs: readonly number[]) {
  const ids = [...refs];
  const [faces, voices, templates] = await Promise.all([
    db
      .selectFrom('face_samples')
      .select([
        'id',
        'subject_ref',
        'operation_uuid',
        'image_id',
        'rectangle',
        'yaw',
        'pitch',
        'roll',
        'quality',
        'liveness_score',
        'template_version',
        'created_at',
      ])
      .where('subject_ref', 'in', ids)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('voice_samples')
      .select([
        'id',
        'subject_ref',
        'operation_uuid',
        'duration_ms',
        'sample_rate',
        'quality',
        'speech_ratio',
        'template_version',
        'created_at',
      ])
      .where('subject_ref', 'in', ids)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('templates')
      .select(['subject_ref', 'modality', 'template_version', 'quality'])
      .where('subject_ref', 'in', ids)
      .execute(),
  ]);
  return { faces, voices, templates };
}
