import type { Kysely } from 'kysely';
import { connectDatabase } from '../../src/db/connect.js';
import type { Database } from '../../src/db/tables.js';
import { freshPostgres } from './databases.js';
import { migratedPgliteImage } from './pglite-image.js';

/**
 * A migrated, empty database of one dialect for repository tests (test/db/repositories-*.test.ts), without
 * booting the service: PGlite from the cached migrated image, PostgreSQL as a copy of the migrated template.
 * `close` also drops the PostgreSQL database.
 */
export async function openMigratedDatabase(
  dialect: 'pglite' | 'postgres',
): Promise<{ db: Kysely<Database>; close: () => Promise<void> }> {
  if (dialect === 'pglite') {
    const handle = await connectDatabase({ dataDir: 'memory://', loadDataDir: await migratedPgliteImage() });
    return { db: handle.db, close: () => handle.close() };
  }
  const fresh = await freshPostgres({ migrated: true });
  const handle = await connectDatabase({ url: fresh.url, poolSize: 2 });
  return {
    db: handle.db,
    close: async () => {
      await handle.close();
      await fresh.drop();
    },
  };
}
