import { Kysely } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import { openPglite, type DatabaseHandle, type OpenedPglite } from '../../src/db/connect.js';
import type { Database } from '../../src/db/tables.js';
import { setWriteGeneration } from '../../src/db/write-generation.js';
import { migratedPgliteImage } from './pglite-image.js';
import { testSettings } from './test-settings.js';

/**
 * Migrated PGlite instances lent to suite after suite within one test process. Opening one from the migrated
 * image costs ~0.7 CPU-s (the wasm module instantiated, the 41 MB data directory unpacked); the HTTP tier boots
 * a service about a hundred times a run. A lent instance comes back through its handle's close() and is reset
 * there to what a freshly opened one holds, as far as any statement can see:
 * - every row gone, by one TRUNCATE ... RESTART IDENTITY CASCADE of every table of the image (read from the
 *   catalogue) but the migrator's own two; every sequence restarted (subject_revisions belongs to no column, so
 *   RESTART IDENTITY leaves it alone); the image has no other rows (checked once per process: if a migration ever
 *   seeds rows, instances are no longer lent twice rather than reset wrongly);
 * - the session as new: DISCARD ALL (settings, LISTEN subscriptions, prepared statements, temporary tables,
 *   advisory locks, cached plans, sequence state), after a ROLLBACK of a transaction left open;
 * - the schema as migrated: a fingerprint of the catalogue (tables, columns in order, indexes, constraints,
 *   triggers, functions, types, roles, extensions, settings, applied migrations) must equal the image's, else the
 *   instance is closed instead (a suite that altered a table, test/http/exceptions.test.ts, or added a trigger).
 * What no reset undoes in the one session PGlite has: a custom variable (`set_config('x.y', ...)`) stays defined, as
 * empty text, after DISCARD ALL (a new session would not know it); nothing in the service sets one.
 * An instance is lent to one user at a time, through a Kysely of its own: once that user's handle is closed, any
 * statement it still sends fails ("driver has already been destroyed") instead of reaching the next user, and an
 * instance returned with a statement or transaction still under way is closed, never reset under its feet.
 * BIMS_TEST_PGLITE_POOL=off opens a fresh instance for every user (to compare, or to rule the pool out).
 */

/** Idle instances kept per process: each holds ~150 MB; a suite rarely has more than two services up at once. */
const KEEP = 2;

/** What a freshly opened instance holds, read from the first one this process opens. */
interface Image {
  tables: string[];
  sequences: string[];
  fingerprint: string;
  /** Tables the migrations put rows in (besides the migrator's): a reset cannot restore those, so none is lent twice. */
  seeded: string[];
}

const MIGRATOR_TABLES = ['kysely_migration', 'kysely_migration_lock'];
const idle: OpenedPglite[] = [];
/** Instances opened for one user alone ({@link lendMigratedPglite}'s `fresh`). */
const onceOnly = new WeakSet<OpenedPglite>();
let image: Promise<Image> | undefined;

/**
 * A migrated, empty PGlite for one user: a handle (as connectDatabase returns) whose close() gives the instance
 * back. Hand it to boot() as `database` (boot then leaves it open) and close it after the service. `fresh`: one
 * opened for this user, closed after it (a suite that patches PGlite's prototype before any client of its own
 * exists: an instance opened earlier keeps the methods it was opened with).
 */
export async function lendMigratedPglite(options: { fresh?: boolean } = {}): Promise<DatabaseHandle> {
  const opened = (!options.fresh && idle.pop()) || (await openMigrated());
  if (options.fresh) onceOnly.add(opened);
  const dialect = new LentDialect(opened.client);
  const db = new Kysely<Database>({ dialect });
  setWriteGeneration(db, opened.writes);
  let returned: Promise<void> | undefined;
  return {
    db,
    dialect: 'pglite',
    writes: opened.writes,
    close: () => (returned ??= giveBack(opened, db, dialect)),
  };
}

async function openMigrated(): Promise<OpenedPglite> {
  const opened = await openPglite({ dataDir: 'memory://', loadDataDir: await migratedPgliteImage() });
  image ??= readImage(opened);
  await image;
  return opened;
}

/**
 * A PGlite dialect for one user: once given back, its driver lends the client no more (every later statement of
 * that user fails, even one of a Kysely that had sent none, which Kysely's destroy would not stop), and it tells
 * whether a connection (a transaction, a statement) was still held through it when it was given back.
 */
class LentDialect extends PGliteDialect {
  private driver?: { connection?: unknown; queue: unknown[] };
  private givenBack = false;

  override createDriver() {
    const driver = super.createDriver();
    const acquire = driver.acquireConnection.bind(driver);
    driver.acquireConnection = () => {
      if (this.givenBack) throw new Error('a PGlite handle used after it was given back to the pool (pglite-pool.ts)');
      return acquire();
    };
    // Kysely's destroy must not close the PGlite: it is the pool's.
    driver.destroy = async () => {};
    this.driver = driver as unknown as { connection?: unknown; queue: unknown[] };
    return driver;
  }

  /** Stop lending; true if a connection was still held (a transaction open, a statement queued). */
  giveBack(): boolean {
    this.givenBack = true;
    return this.driver?.connection !== undefined || (this.driver?.queue.length ?? 0) > 0;
  }
}

async function giveBack(opened: OpenedPglite, db: Kysely<Database>, dialect: LentDialect): Promise<void> {
  // A transaction still open through this handle would go on writing through the connection it holds.
  const busy = dialect.giveBack();
  await db.destroy();
  const { client, writes } = opened;
  const known = await image!;
  const reusable =
    testSettings().BIMS_TEST_PGLITE_POOL !== 'off' &&
    !onceOnly.has(opened) &&
    known.seeded.length === 0 &&
    idle.length < KEEP &&
    !client.closed &&
    !busy &&
    writes.quiet !== undefined;
  if (reusable && (await reset(opened, known))) {
    idle.push(opened);
    return;
  }
  // PGlite's close() waits for a statement still under way: never awaited here, where one may never end.
  if (!client.closed) void client.close().catch(() => {});
}

/** Reset `opened` to the image's state; false (and the caller closes it) if its schema is no longer the image's. */
async function reset({ client }: OpenedPglite, known: Image): Promise<boolean> {
  try {
    if (client.isInTransaction()) await client.exec('rollback');
    if ((await fingerprint(client)) !== known.fingerprint) return false;
    const tables = known.tables.map(quoted).join(', ');
    const sequences = known.sequences.map((s) => `alter sequence ${quoted(s)} restart;`).join('\n');
    await client.exec(`truncate ${tables} restart identity cascade;\n${sequences}`);
    // Not in the statement above: DISCARD ALL refuses to run inside a transaction, and a simple query with
    // several statements is one.
    await client.exec('discard all');
    return true;
  } catch {
    return false;
  }
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

async function readImage(opened: OpenedPglite): Promise<Image> {
  const { client } = opened;
  const tables = (
    await client.query<{ name: string }>(
      `select tablename as name from pg_tables where schemaname = 'public' and tablename <> all($1) order by 1`,
      [MIGRATOR_TABLES],
    )
  ).rows.map((r) => r.name);
  const sequences = (
    await client.query<{ name: string }>(
      `select sequencename as name from pg_sequences where schemaname = 'public' order by 1`,
    )
  ).rows.map((r) => r.name);
  const seeded: string[] = [];
  for (const table of tables) {
    const { rows } = await client.query(`select 1 from ${quoted(table)} limit 1`);
    if (rows.length) seeded.push(table);
  }
  return { tables, sequences, fingerprint: await fingerprint(client), seeded };
}

/**
 * One text for everything a suite could change about the schema and what a fresh session sees of the database.
 * Temporary schemas are left out (DISCARD ALL drops their tables; the namespaces themselves stay in the catalogue).
 */
async function fingerprint(client: OpenedPglite['client']): Promise<string> {
  const { rows } = await client.query<{ f: string }>(`
    with ns as (select oid, nspname from pg_namespace where nspname not like 'pg\\_temp\\_%' and nspname not like 'pg\\_toast\\_temp\\_%')
    select md5(string_agg(x, E'\\n' order by x)) as f from (
      select 'n ' || nspname from ns
      union all select 'c ' || n.nspname || '.' || c.relname || ' ' || c.relkind::text || ' ' || c.relpersistence::text
        from pg_class c join ns n on n.oid = c.relnamespace
      union all select 'a ' || c.oid::regclass || ' ' || a.attnum || ' ' || a.attname || ' ' || a.atttypid::regtype
          || ' ' || a.attnotnull || ' ' || a.attisdropped || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
        from pg_attribute a join pg_class c on c.oid = a.attrelid join ns n on n.oid = c.relnamespace
        left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
        where a.attnum > 0 and n.nspname = 'public'
      union all select 'k ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
        from pg_constraint where connamespace = 'public'::regnamespace
      union all select 'i ' || indexrelid::regclass || ' ' || pg_get_indexdef(indexrelid)
        from pg_index i join pg_class c on c.oid = i.indrelid where c.relnamespace = 'public'::regnamespace
      union all select 't ' || tgrelid::regclass || ' ' || tgname || ' ' || tgenabled::text || ' ' || pg_get_triggerdef(oid)
        from pg_trigger where not tgisinternal
      union all select 'p ' || p.oid::regprocedure || ' ' || md5(p.prosrc) || ' ' || p.provolatile::text
        from pg_proc p join ns n on n.oid = p.pronamespace where n.nspname not in ('pg_catalog', 'information_schema')
      union all select 'y ' || t.oid::regtype || ' ' || t.typtype::text from pg_type t where t.typnamespace = 'public'::regnamespace
      union all select 'e ' || enumtypid::regtype || ' ' || enumsortorder || ' ' || enumlabel from pg_enum
      union all select 'r ' || rolname || ' ' || rolsuper || ' ' || rolcanlogin from pg_roles
      union all select 'x ' || extname || ' ' || extversion from pg_extension
      union all select 's ' || setdatabase || ' ' || setrole || ' ' || array_to_string(setconfig, ',') from pg_db_role_setting
      union all select 'v ' || c.oid::regclass || ' ' || pg_get_viewdef(c.oid) from pg_class c where c.relkind in ('v', 'm') and c.relnamespace = 'public'::regnamespace
      union all select 'm ' || name from kysely_migration
      union all select 'l ' || id || ' ' || is_locked from kysely_migration_lock
    ) f(x)`);
  return rows[0]!.f;
}
