import { sql, type Kysely } from 'kysely';

/**
 * Gateway sessions and handles with their owner, readable from every node (docs/media-gateway.md, "Whose
 * session"). A session made through the API belongs to the account (or OAuth client) that made it; calls
 * about it from anyone else answer as for an unknown id. The rows also count what each owner holds, so that
 * the per-account and service caps hold across nodes.
 *
 * `gateway_sessions`: one row per session, written once Janus made it and the owner's count (under an advisory
 * lock) still admits it. `handles` counts the handles attached (the per-session cap). Rows go when the session
 * is stopped or found gone, and the heartbeat drops rows whose session Janus no longer lists.
 *
 * `gateway_handles`: the handles of each session and their plugin (so that any node knows a handle's plugin
 * without asking Janus), gone with their session.
 *
 * `capture_sessions.owner`: the owner of each capture under the same key, for the per-account capture cap.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('gateway_sessions')
    .addColumn('session_id', 'bigint', (c) => c.primaryKey())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('handles', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();
  // Admission counts an owner's sessions.
  await db.schema.createIndex('gateway_sessions_owner').on('gateway_sessions').column('owner').execute();
  await db.schema
    .createTable('gateway_handles')
    .addColumn('session_id', 'bigint', (c) => c.notNull().references('gateway_sessions.session_id').onDelete('cascade'))
    .addColumn('handle_id', 'bigint', (c) => c.notNull())
    .addColumn('plugin', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('gateway_handles_pkey', ['session_id', 'handle_id'])
    .execute();
  await db.schema.alterTable('capture_sessions').addColumn('owner', 'text').execute();
  // Admission counts the unfinished captures (of an owner, and in all).
  await sql`create index capture_sessions_unfinished on capture_sessions (owner) where finished_at is null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists capture_sessions_unfinished`.execute(db);
  await db.schema.alterTable('capture_sessions').dropColumn('owner').execute();
  await db.schema.dropTable('gateway_handles').ifExists().execute();
  await db.schema.dropTable('gateway_sessions').ifExists().execute();
}
