import { sql, type Kysely } from 'kysely';

/**
 * The service's own keys for templates: an Ed25519 pair that signs QR-code templates and an ECDH-ES key that
 * encrypts enrolled templates for remote verification. They live in the database, not in a process, so that
 * every node signs, verifies and decrypts alike. At most one active (unretired) key per purpose: the partial
 * unique index lets two nodes racing to create the first key agree on one.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('service_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('purpose', 'text', (c) => c.notNull().check(sql`purpose in ('template-signing', 'template-encryption')`))
    .addColumn('alg', 'text', (c) => c.notNull())
    .addColumn('private_jwk', 'jsonb', (c) => c.notNull())
    .addColumn('public_jwk', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('retired_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('service_keys_active')
    .on('service_keys')
    .column('purpose')
    .unique()
    .where(sql.ref('retired_at'), 'is', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('service_keys').ifExists().execute();
}
