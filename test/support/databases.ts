import pg from 'pg';
import { loadConfig, type Config } from '../../src/config/config.js';
import { boot, type BootOptions, type Booted } from '../../src/runtime/bootstrap.js';
import { migrationsHash } from './pglite-image.js';
import { lendMigratedPglite } from './pglite-pool.js';
import { connectDatabase, migrate, type DatabaseHandle } from '../../src/db/connect.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { nodeAssetReader } from '../../src/runtime/node-assets.js';
import type { Extractor } from '../../src/extraction/extractor.js';
import type { GalleryFreshness } from '../../src/services/gallery/gallery-sync.js';
import { testSettings } from './test-settings.js';

/**
 * The dialects every repository and HTTP suite runs over: PGlite always, PostgreSQL when DATABASE_URL is set;
 * BIMS_TEST_DIALECTS (e.g. `postgres`) narrows that to some of them (`npm run test:postgres`).
 */
const chosenDialects = testSettings()
  .BIMS_TEST_DIALECTS?.split(',')
  .map((d) => d.trim())
  .filter(Boolean);
export const dialects: ('pglite' | 'postgres')[] = (
  process.env.DATABASE_URL ? (['pglite', 'postgres'] as const) : (['pglite'] as const)
).filter((d) => !chosenDialects?.length || chosenDialects.includes(d));

/**
 * The dialects of an HTTP, security or gateway suite whose subject is the service above the SQL: PGlite alone.
 * The SQL is the same on both (PGlite is PostgreSQL's own code): the repositories run over both in test/db, the
 * races where connections really interleave (two transactions on a pool, two processes) over PostgreSQL, and a
 * suite whose behaviour differs by dialect loops over {@link dialects} and says why. BIMS_TEST_DIALECTS set
 * chooses for these suites too (`npm run test:postgres` runs them all on PostgreSQL).
 */
export const serviceDialects: ('pglite' | 'postgres')[] = chosenDialects?.length
  ? dialects
  : dialects.filter((d) => d === 'pglite');

const uniqueName = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;

async function asAdmin<T>(adminUrl: URL, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

let template: Promise<string> | undefined;

/**
 * A PostgreSQL database with every migration applied and nothing else (the migrations insert no rows), for
 * `create database ... template` to copy: a copy takes a tenth of the time the migrations take, and the
 * PostgreSQL suites boot a service on a database of its own a hundred times a run. One per version of the
 * migrations (named by the hash the PGlite image uses), made by whichever process needs it first: each builds
 * its own under a temporary name and renames it into place, so no copy is ever taken of a half-migrated one.
 */
function migratedTemplate(adminUrl: URL): Promise<string> {
  template ??= (async () => {
    const name = `bims_template_${migrationsHash()}`;
    const exists = await asAdmin(adminUrl, (c) => c.query('select 1 from pg_database where datname = $1', [name]));
    if (exists.rowCount) return name;
    const building = uniqueName('bims_template_building');
    await asAdmin(adminUrl, (c) => c.query(`create database ${building}`));
    const url = new URL(adminUrl);
    url.pathname = `/${building}`;
    const database = await connectDatabase({ url: url.toString(), poolSize: 1 });
    try {
      await migrate(database.db);
    } finally {
      await database.close();
    }
    await asAdmin(adminUrl, async (c) => {
      try {
        await c.query(`alter database ${building} rename to ${name}`);
      } catch (error) {
        // Another process got there first (42P04: duplicate_database): theirs is the same.
        if ((error as { code?: string }).code !== '42P04') throw error;
        await c.query(`drop database if exists ${building} with (force)`);
      }
    });
    return name;
  })();
  return template;
}

/**
 * Make a PostgreSQL database of its own for one suite and return its URL plus a drop function: empty, or with
 * `migrated`, a copy of the migrated template (for suites that test the service, not its migrations).
 * Not lent and reset like PGlite's (pglite-pool.ts): the http project makes 36 a run, each ~0.1-0.2 CPU-s of the
 * server's (create 0.08-0.21, drop 0.02, measured at load 20) and none of the suite's, against ~0.7 CPU-s of the
 * suite's for each PGlite opened; their cost is wall time (0.7 s to create, 1.1 s to drop under load).
 */
export async function freshPostgres(
  options: { migrated?: boolean } = {},
): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = new URL(process.env.DATABASE_URL!);
  const name = uniqueName('bims_t');
  const adminUrl = new URL(base);
  adminUrl.pathname = '/postgres';
  const from = options.migrated ? ` template ${await migratedTemplate(adminUrl)}` : '';
  await asAdmin(adminUrl, (c) => c.query(`create database ${name}${from}`));
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => asAdmin(adminUrl, (c) => dropWhenLeft(c, name)),
  };
}

/**
 * Drop a suite's database once its own connections have gone, forcing out only those still there after 2 s. A
 * pool's end() resolves while its clients' sockets are still closing; a forced drop meanwhile terminates them,
 * and the FATAL 57P01 reaching a client being ended surfaced as an uncaught error in the suite that had closed
 * its pool properly (sharded-matching, once in a full run).
 */
async function dropWhenLeft(admin: pg.Client, name: string): Promise<void> {
  const until = Date.now() + 2_000;
  for (;;) {
    const { rows } = await admin.query('select count(*)::int as n from pg_stat_activity where datname = $1', [name]);
    if (rows[0].n === 0 || Date.now() > until) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await admin.query(`drop database if exists ${name} with (force)`);
}

export const ADMIN_PASSWORD = 'admin-password-for-tests';

/**
 * Boot the whole service on a fresh database of the given dialect, with fast password hashing so suites
 * that create many accounts stay quick (the KDF itself is tested separately at full cost).
 */
export async function bootForTest(
  dialect: 'pglite' | 'postgres',
  env: Record<string, string> = {},
  options: {
    logger?: Logger;
    now?: () => Date;
    createExtractor?: () => Promise<Extractor>;
    galleryFreshness?: GalleryFreshness;
    /** The caller's address as a runtime entry would report it (default: 'unknown' for every request). */
    clientAddress?: (request: Request) => string;
    /** Threads that share 1:N searches (the Node runtime's MatcherPool). */
    matcherThreads?: BootOptions['matcherThreads'];
    /** PGlite: an instance opened for this service alone, not one lent before (pglite-pool.ts). */
    freshPglite?: boolean;
  } = {},
): Promise<Booted & { config: Config }> {
  let dropDb: (() => Promise<void>) | undefined;
  let lent: DatabaseHandle | undefined;
  const vars: Record<string, string> = {
    BIMS_ADMIN_PASSWORD: ADMIN_PASSWORD,
    BIMS_PASSWORD_ITERATIONS: '10000',
    BIMS_LOG_LEVEL: 'silent',
    BIMS_CHECK_ANSWERS: 'on',
    ...env,
  };
  if (dialect === 'pglite') {
    // A migrated PGlite lent by this process's pool (pglite-pool.ts): the service leaves it open, and it goes back,
    // reset to the migrated image, when this service closes.
    lent = await lendMigratedPglite({ fresh: options.freshPglite });
  } else {
    // Boot still runs the migrations, and finds them applied: the migrations on PostgreSQL are tested by the
    // suites that start on an empty database (data-migrations, the service-process suites).
    const fresh = await freshPostgres({ migrated: true });
    vars.DATABASE_URL = fresh.url;
    dropDb = fresh.drop;
  }
  const config = loadConfig(vars);
  const booted = await boot({
    config,
    runtime: 'test',
    hostname: 'test-host',
    database: lent,
    logger: options.logger ?? createLogger('silent'),
    now: options.now,
    readAsset: nodeAssetReader(),
    createExtractor: options.createExtractor,
    galleryFreshness: options.galleryFreshness,
    clientAddress: options.clientAddress,
    matcherThreads: options.matcherThreads,
  }).catch(async (error: unknown) => {
    await lent?.close();
    await dropDb?.();
    throw error;
  });
  return {
    ...booted,
    config,
    async close() {
      await booted.close();
      await lent?.close();
      await dropDb?.();
    },
  };
}

export const basic = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
export const adminAuth = basic('admin', ADMIN_PASSWORD);
