import type { Kysely } from 'kysely';

/**
 * Access tokens revoked before they expire (`POST /oauth2/revoke`, RFC 7009), by their `jti`: the Bearer
 * check of every node asks this table in the statement it already makes (the account's, or the client's),
 * so a revoked token is refused everywhere from the next request on. A row is kept until the token expires
 * and is pruned after.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('revoked_access_tokens')
    .addColumn('jti', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('revoked_access_tokens').execute();
}
