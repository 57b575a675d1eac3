import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectDatabase, migrate } from '../../src/db/connect.js';

/**
 * A PGlite data directory with every migration applied, as a tarball that a test's PGlite starts from
 * (`loadDataDir`) instead of running initdb and the migrations again: about 5 s of CPU per boot, and the suite
 * boots a few hundred. Made once per version of the migrations and kept in .cache/ (named by a hash of the
 * migration sources, so a changed migration makes a new one); processes that race to make it each write
 * their own file and rename it into place, so none reads half a file.
 */
const MIGRATIONS = join(import.meta.dirname, '../../src/db/migrations');
const CACHE = join(import.meta.dirname, '../../.cache/test-pglite');

/** Names what the migrations make: a changed migration gives a new name (also the PostgreSQL template's, databases.ts). */
export function migrationsHash(): string {
  const hash = createHash('sha256');
  for (const name of readdirSync(MIGRATIONS).sort()) hash.update(name).update(readFileSync(join(MIGRATIONS, name)));
  return hash.digest('hex').slice(0, 16);
}

let image: Promise<Blob> | undefined;

export function migratedPgliteImage(): Promise<Blob> {
  image ??= (async () => {
    const file = join(CACHE, `migrated-${migrationsHash()}.tar`);
    if (existsSync(file)) return new Blob([readFileSync(file)]);
    const database = await connectDatabase({ dataDir: 'memory://' });
    try {
      await migrate(database.db);
      const tarball = await database.dumpDataDir!();
      mkdirSync(CACHE, { recursive: true });
      const temporary = `${file}.${process.pid}.tmp`;
      writeFileSync(temporary, new Uint8Array(await tarball.arrayBuffer()));
      renameSync(temporary, file);
      return tarball;
    } finally {
      await database.close();
    }
  })();
  return image;
}

/**
 * Fill `dataDir` (an empty directory) with the migrated image, unpacked: a service started on it with
 * BIMS_DATA_DIR finds every migration applied, where an empty directory costs it initdb and the migrations
 * (about 4 s of CPU a start). For suites about something else than a first start's migrations.
 */
export async function unpackMigratedPglite(dataDir: string): Promise<void> {
  await migratedPgliteImage();
  execFileSync('tar', ['-xf', join(CACHE, `migrated-${migrationsHash()}.tar`), '-C', dataDir], { stdio: 'ignore' });
}
