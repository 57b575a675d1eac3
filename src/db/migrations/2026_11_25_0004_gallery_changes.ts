import { sql, type Kysely } from 'kysely';

/**
 * The gallery change log: one row per committed change to the set of ENROLLED templates, written inside the
 * changing transaction (src/services/gallery/change-log.ts). Nodes that cannot LISTEN (Cloudflare Workers)
 * read the rows after the last id they applied before each gallery search; the others use it to catch up after
 * losing their listening connection. `subject_refs` are subjects.id values ([] for reset and pruned);
 * `pruned` marks the horizon: every older row is gone, so a node that has not seen it must reload.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('gallery_changes')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('put', 'remove', 'reset', 'pruned')`))
    .addColumn('subject_refs', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // Pruning finds the newest row older than the retention period.
  await db.schema.createIndex('gallery_changes_created').on('gallery_changes').column('created_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('gallery_changes').ifExists().execute();
}
