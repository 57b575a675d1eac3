import { sql, type Kysely } from 'kysely';

/**
 * Capture sessions readable from every node (docs/gateway-capture.md, "Across nodes"). A capture runs on the
 * node that answered its connect; that node writes here what a client reads of it (state, events oldest
 * first, outcome) as it changes, so a trickle or getSession on any node answers from this row.
 *
 * `capture_id` names one capture: a new connect on the same handle replaces the row, and the replaced
 * capture's late writes (which name the old id) change nothing. `node_id` is the `service_nodes` row of the
 * node running it; an unfinished row past `deadline_at` whose node no longer reports in is settled as FAILED
 * (`NODE_LOST`) by whichever node reads it. Finished rows are kept 10 minutes, then pruned by the heartbeat.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('capture_sessions')
    .addColumn('session_id', 'bigint', (c) => c.notNull())
    .addColumn('handle_id', 'bigint', (c) => c.notNull())
    .addColumn('capture_id', 'uuid', (c) => c.notNull())
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'integer')
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('events', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('result', 'jsonb')
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('finished_at', 'timestamptz')
    .addColumn('deadline_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('capture_sessions_pkey', ['session_id', 'handle_id'])
    .execute();
  // Pruning finds the rows finished long enough ago.
  await db.schema.createIndex('capture_sessions_finished').on('capture_sessions').column('finished_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('capture_sessions').ifExists().execute();
}
