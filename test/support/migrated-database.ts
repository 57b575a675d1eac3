import type { Kysely } from 'kysely';
import { connectDatabase } from '../../src/db/connect.js';
import type { Database } from '../../src/db/tables.js';
import { freshPostgres } from './databases.js';
import { lendMigratedPglite } from './pglite-pool.js';

/**
 * A migrated, empty database of one dialect for repository tests (test/db/repositories-*.test.ts), without
 * booting the service: PGlite lent by the pool of migrated instances, PostgreSQL as a copy of the migrated template.
 * `close` also drops the PostgreSQL database.
 */
export async function openMigratedDatabase(
  dialect: 'pglite' | 'postgres',
): Promise<{ db: Kysely<Database>; close: () => Promise<void> }> {
  if (dialect === 'pglite') {
    // Lent by this process's pool and given back, reset, by close (pglite-pool.ts).
    const handle = await lendMigratedPglite();
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
