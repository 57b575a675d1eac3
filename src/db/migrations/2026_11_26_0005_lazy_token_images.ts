import { sql, type Kysely } from 'kysely';

/**
 * Token images are made when first asked for, not at enrolment (services/biometric-data/token-images.ts):
 * a TOKEN row is stored with its size and format but no bytes, and names the ORIGINAL image it is cut from
 * (the face sample of that image holds the landmarks). Rendering fills the bytes once. Rows made before this
 * migration keep their bytes and need no source. Only a TOKEN row with a source may lack bytes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('images')
    .alterColumn('bytes', (c) => c.dropNotNull())
    .execute();
  await db.schema
    .alterTable('images')
    .addColumn('source_image_id', 'integer', (c) => c.references('images.id').onDelete('cascade'))
    .execute();
  await db.schema
    .alterTable('images')
    .addCheckConstraint(
      'images_bytes_or_pending_token',
      sql`bytes is not null or (kind = 'TOKEN' and source_image_id is not null)`,
    )
    .execute();
  // Deleting an original finds its token through this index; reads find the pending ones through the second.
  await db.schema.createIndex('images_source').on('images').column('source_image_id').execute();
  await db.schema
    .createIndex('images_pending_token')
    .on('images')
    .column('id')
    .where(sql.ref('bytes'), 'is', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('images').where('bytes', 'is', null).execute();
  await db.schema.dropIndex('images_pending_token').ifExists().execute();
  await db.schema.dropIndex('images_source').ifExists().execute();
  await db.schema.alterTable('images').dropConstraint('images_bytes_or_pending_token').execute();
  await db.schema.alterTable('images').dropColumn('source_image_id').execute();
  await db.schema
    .alterTable('images')
    .alterColumn('bytes', (c) => c.setNotNull())
    .execute();
}
