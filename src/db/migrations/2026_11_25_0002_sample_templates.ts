import type { Kysely } from 'kysely';

/**
 * Each stored sample keeps the template extracted from it: verification compares a probe with every face
 * sample of a subject (best score wins), so the gallery holds one row per sample, not one per subject.
 * The `templates` table keeps the subject's compact template per modality (QR codes, exports).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('face_samples').addColumn('template', 'bytea').execute();
  await db.schema.alterTable('voice_samples').addColumn('template', 'bytea').execute();
  // The gallery loads templates by version; enrolment looks up samples by operation.
  await db.schema.createIndex('face_samples_version').on('face_samples').column('template_version').execute();
  await db.schema.createIndex('face_samples_operation').on('face_samples').column('operation_uuid').execute();
  await db.schema.createIndex('voice_samples_operation').on('voice_samples').column('operation_uuid').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('voice_samples_operation').ifExists().execute();
  await db.schema.dropIndex('face_samples_operation').ifExists().execute();
  await db.schema.dropIndex('face_samples_version').ifExists().execute();
  await db.schema.alterTable('voice_samples').dropColumn('template').execute();
  await db.schema.alterTable('face_samples').dropColumn('template').execute();
}
