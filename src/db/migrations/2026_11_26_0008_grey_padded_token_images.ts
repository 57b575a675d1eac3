import { sql, type Kysely } from 'kysely';

/**
 * Token images are now padded with neutral grey where the frame reaches past the photo (face/pipeline.ts),
 * instead of edge pixels smeared into streaks. Token rows that name their original are made pending again,
 * so the next read renders them the new way (services/biometric-data/token-images.ts); rows made before
 * token images were lazy have no original to render from and keep their bytes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`update images set bytes = null where kind = 'TOKEN' and source_image_id is not null and bytes is not null`.execute(
    db,
  );
}

/** Nothing to undo: a pending token is rendered on its next read either way. */
export async function down(): Promise<void> {}
