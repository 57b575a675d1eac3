import pg from 'pg';
import { loadConfig, type Config } from '../../src/config/config.js';
import { boot, type BootOptions, type Booted } from '../../src/runtime/bootstrap.js';
import { migratedPgliteImage } from './pglite-image.js';
import { createLogger, type Logger } from '../../src/services/logger.js';
import { nodeAssetReader } from '../../src/runtime/node-assets.js';
import type { Extractor } from '../../src/extraction/index.js';
import type { GalleryFreshness } from '../../src/services/gallery/gallery-cache.js';

/**
 * The dialects every repository and HTTP suite runs over: PGlite always, PostgreSQL when DATABASE_URL is set;
 * BIMS_TEST_DIALECTS (e.g. `postgres`) narrows that to some of them (`npm run test:postgres`).
 */
const chosenDialects = process.env.BIMS_TEST_DIALECTS?.split(',').map((d) => d.trim()).filter(Boolean);
export const dialects: ('pglite' | 'postgres')[] = (process.env.DATABASE_URL ? (['pglite', 'postgres'] as const) : (['pglite'] as const)).filter(
  (d) => !chosenDialects?.length || chosenDialects.includes(d),
);

/** Make an empty PostgreSQL database of its own for one suite and return its URL plus a drop function. */
export async function freshPostgres(): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = new URL(process.env.DATABASE_URL!);
  const name = `bims_t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const adminUrl = new URL(base);
  adminUrl.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl.toString() });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
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
  } = {},
): Promise<Booted & { config: Config }> {
  let dropDb: (() => Promise<void>) | undefined;
  const vars: Record<string, string> = { BIMS_ADMIN_PASSWORD: ADMIN_PASSWORD, BIMS_PASSWORD_ITERATIONS: '10000', BIMS_LOG_LEVEL: 'silent', BIMS_CHECK_ANSWERS: 'on', ...env };
  if (dialect === 'postgres') {
    const fresh = await freshPostgres();
    vars.DATABASE_URL = fresh.url;
    dropDb = fresh.drop;
  }
  const config = loadConfig(vars);
  const booted = await boot({ config, runtime: 'test', hostname: 'test-host', pgliteDir: 'memory://',
    pgliteImage: dialect === 'pglite' ? await migratedPgliteImage() : undefined,
    logger: options.logger ?? createLogger('silent'),
    now: options.now,
    readAsset: nodeAssetReader(),
    createExtractor: options.createExtractor,
    galleryFreshness: options.galleryFreshness,
    clientAddress: options.clientAddress,
    matcherThreads: options.matcherThreads,
  });
  return {
    ...booted,
    config,
    async close() {
      await booted.close();
      await dropDb?.();
    },
  };
}

export const basic = (username: string, password: string) => `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
export const adminAuth = basic('admin', ADMIN_PASSWORD);
