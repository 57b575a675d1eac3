import { sql, type Kysely } from 'kysely';

/**
 * The first schema: every table the service needs, designed up front so that later areas fill them rather
 * than redesign them. Frozen in time: it is typed against Kysely<any> and imports no application code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const now = sql`now()`;

  await db.schema
    .createTable('accounts')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('username', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('ADMIN','ADJUDICATOR','USER')`))
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();

  // OAuth clients for integrations (client_credentials) and browser apps (authorization_code + PKCE).
  await db.schema
    .createTable('oauth_clients')
    .addColumn('client_id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text') // null for public clients, which must use PKCE
    .addColumn('redirect_uris', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('grant_types', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('ADMIN','ADJUDICATOR','USER')`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();

  await db.schema
    .createTable('oauth_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().references('oauth_clients.client_id').onDelete('cascade'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .execute();

  // Refresh tokens rotate: each use replaces the token; reusing a replaced one revokes its whole family.
  await db.schema
    .createTable('refresh_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('family_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('replaced_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex('refresh_tokens_family').on('refresh_tokens').column('family_id').execute();

  await db.schema
    .createTable('signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('alg', 'text', (c) => c.notNull())
    .addColumn('private_jwk', 'jsonb', (c) => c.notNull())
    .addColumn('public_jwk', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('retired_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'jsonb', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();

  await db.schema
    .createTable('exceptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('timestamp', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('operation_id', 'text')
    .addColumn('method', 'text')
    .addColumn('path', 'text')
    .addColumn('account_id', 'integer')
    .addColumn('surface', 'text')
    .addColumn('call_stack', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema.createIndex('exceptions_timestamp').on('exceptions').column('timestamp').execute();

  await db.schema
    .createTable('subjects')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('subject_id', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('ENROLLED','PENDING_ADJUDICATION','REJECTED')`),
    )
    .addColumn('metadata', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('template_version', 'text')
    .addColumn('enrollment_operation_uuid', 'uuid')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex('subjects_status').on('subjects').column('status').execute();

  await db.schema
    .createTable('operations')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('uuid', 'uuid', (c) => c.notNull().unique())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text') // the client's subjectId; kept after the subject is gone, for the audit log
    .addColumn('modalities', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('score', 'double precision')
    .addColumn('threshold', 'double precision')
    .addColumn('candidates', 'jsonb')
    .addColumn('checks', 'jsonb')
    .addColumn('details', 'jsonb')
    .addColumn('duration_ms', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('account_id', 'integer')
    .addColumn('surface', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex('operations_subject').on('operations').column('subject_id').execute();
  await db.schema.createIndex('operations_created').on('operations').column('created_at').execute();

  // Sample bytes (images, audio) as received, plus derived images (token, face crop).
  await db.schema
    .createTable('images')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('operation_uuid', 'uuid', (c) => c.notNull())
    .addColumn('subject_ref', 'integer', (c) => c.references('subjects.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('ORIGINAL','TOKEN','FACE_CROP')`))
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('width', 'integer', (c) => c.notNull())
    .addColumn('height', 'integer', (c) => c.notNull())
    .addColumn('bytes', 'bytea', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex('images_operation').on('images').column('operation_uuid').execute();
  await db.schema.createIndex('images_subject').on('images').column('subject_ref').execute();

  await db.schema
    .createTable('face_samples')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('subject_ref', 'integer', (c) => c.references('subjects.id').onDelete('cascade'))
    .addColumn('operation_uuid', 'uuid', (c) => c.notNull())
    .addColumn('image_id', 'integer', (c) => c.references('images.id').onDelete('set null'))
    .addColumn('rectangle', 'jsonb', (c) => c.notNull())
    .addColumn('landmarks', 'jsonb')
    .addColumn('yaw', 'real')
    .addColumn('pitch', 'real')
    .addColumn('roll', 'real')
    .addColumn('quality', 'real')
    .addColumn('liveness_score', 'real')
    .addColumn('template_version', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex('face_samples_subject').on('face_samples').column('subject_ref').execute();

  await db.schema
    .createTable('voice_samples')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('subject_ref', 'integer', (c) => c.references('subjects.id').onDelete('cascade'))
    .addColumn('operation_uuid', 'uuid', (c) => c.notNull())
    .addColumn('audio', 'bytea', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('sample_rate', 'integer', (c) => c.notNull())
    .addColumn('quality', 'real')
    .addColumn('speech_ratio', 'real')
    .addColumn('template_version', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex('voice_samples_subject').on('voice_samples').column('subject_ref').execute();

  // One row per subject and modality: the template the matcher's gallery is loaded from.
  await db.schema
    .createTable('templates')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('subject_ref', 'integer', (c) => c.notNull().references('subjects.id').onDelete('cascade'))
    .addColumn('modality', 'text', (c) => c.notNull().check(sql`modality in ('FACE','VOICE')`))
    .addColumn('template_version', 'text', (c) => c.notNull())
    .addColumn('data', 'bytea', (c) => c.notNull())
    .addColumn('quality', 'real')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint('templates_subject_modality', ['subject_ref', 'modality'])
    .execute();

  // Pending and solved adjudication cases share a table: solved_at marks the solved store.
  await db.schema
    .createTable('adjudication_cases')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('operation_uuid', 'uuid', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('candidates', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('PENDING').check(sql`status in ('PENDING','CONFLICTED','SOLVED')`),
    )
    .addColumn('assigned_to', 'integer')
    .addColumn('assigned_at', 'timestamptz')
    .addColumn('lease_expires_at', 'timestamptz')
    .addColumn('outcome', 'text')
    .addColumn('solved_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema
    .createIndex('adjudication_cases_status')
    .on('adjudication_cases')
    .columns(['status', 'created_at'])
    .execute();

  await db.schema
    .createTable('adjudication_decisions')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('case_id', 'integer', (c) => c.notNull().references('adjudication_cases.id').onDelete('cascade'))
    .addColumn('account_id', 'integer', (c) => c.notNull())
    .addColumn('decision', 'text', (c) => c.notNull().check(sql`decision in ('DUPLICATE','NOT_DUPLICATE')`))
    .addColumn('duplicate_of_subject_id', 'text')
    .addColumn('comment', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();

  await db.schema
    .createTable('licences')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('source', 'text', (c) => c.notNull().check(sql`source in ('CLOUD','INTERNET','DONGLE')`))
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('installed_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();

  // Usage is counted in the same transaction as the operation it counts.
  await db.schema
    .createTable('usage_counters')
    .addColumn('period', 'text', (c) => c.notNull())
    .addColumn('operation_type', 'text', (c) => c.notNull())
    .addColumn('licence_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('count', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('usage_counters_pk', ['period', 'operation_type', 'licence_id'])
    .execute();

  // Service processes report in here, so the cluster status can list the nodes sharing the database.
  await db.schema
    .createTable('service_nodes')
    .addColumn('node_id', 'text', (c) => c.primaryKey())
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('runtime', 'text', (c) => c.notNull())
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'service_nodes',
    'usage_counters',
    'licences',
    'adjudication_decisions',
    'adjudication_cases',
    'templates',
    'voice_samples',
    'face_samples',
    'images',
    'operations',
    'subjects',
    'exceptions',
    'settings',
    'signing_keys',
    'refresh_tokens',
    'oauth_codes',
    'oauth_clients',
    'accounts',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
