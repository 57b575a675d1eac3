import { sql, type Kysely } from 'kysely';

/**
 * Login throttling shared by every node, and tokens that end with the credentials they were issued under.
 *
 * `login_throttle` counts failed logins: one row per (subject, address) pair, where the subject is an
 * account's user name or a client id, and one row per address with the subject `*` for its total across
 * subjects. A failure upserts its two rows, a success deletes its pair row, and rows past `expires_at` are
 * pruned. The key starts with the address so that one primary-key read finds both rows of an attempt.
 *
 * `credential_version` counts an account's changes of password, role and enabled flag; every access token,
 * authorization code and refresh token carries the version it was issued under and stops working when the
 * account's differs. Rows made before this migration carry 1, as every account does.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('login_throttle')
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('first_failure_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_failure_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('login_throttle_pkey', ['address', 'subject'])
    .execute();
  await db.schema.createIndex('login_throttle_expires').on('login_throttle').column('expires_at').execute();

  for (const table of ['accounts', 'refresh_tokens', 'oauth_codes']) {
    await db.schema
      .alterTable(table)
      .addColumn('credential_version', 'integer', (c) => c.notNull().defaultTo(1).check(sql`credential_version >= 1`))
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['oauth_codes', 'refresh_tokens', 'accounts']) {
    await db.schema.alterTable(table).dropColumn('credential_version').execute();
  }
  await db.schema.dropTable('login_throttle').ifExists().execute();
}
