import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectDatabase, migrate } from '../../src/db/connect.js';
import { machineCache } from '../../scripts/machine-cache.mjs';

/**
 * A PGlite data directory with every migration applied, as a tarball that a test's PGlite starts from
 * (`loadDataDir`) instead of running initdb and the migrations again: about 5 s of CPU per boot, and the suite
 * boots a few hundred. Made once per version of the migrations and of PGlite, and kept in the machine's cache
 * (`~/.cache/bims/test-pglite`, shared by its clones like the PostgreSQL template database of databases.ts: a
 * clean clone's first suites would otherwise each run initdb and the migrations while they race to make it),
 * named by a hash of the migration sources and PGlite's version, so a changed migration or an upgraded PGlite
 * makes a new one; processes that race to make it each write their own file and rename it into place, so none
 * reads half a file.
 */
const MIGRATIONS = join(import.meta.dirname, '../../src/db/migrations');
const CACHE = machineCache('test-pglite');
const PGLITE_VERSION: string = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../node_modules/@electric-sql/pglite/package.json'), 'utf8'),
).version;
/** The image of these migrations on this PGlite. */
const imageFile = () => join(CACHE, `migrated-${migrationsHash()}-pglite-${PGLITE_VERSION}.tar`);

/** Names what the migrations make: a changed migration gives a new name (also the PostgreSQL template's, databases.ts). */
export function migrationsHash(): string {
  const hash = createHash('sha256');
  for (const name of readdirSync(MIGRATIONS).sort()) hash.update(name).update(readFileSync(join(MIGRATIONS, name)));
  return hash.digest('hex').slice(0, 16);
}

/**
 * The image as PGlite reads it: PGlite starts by `await loadDataDir.arrayBuffer()`, and Node's Blob answers that
 * by streaming its 41 MB out in chunks and joining them, 0.4-0.5 CPU-s every time (measured at load 28; a copy of
 * a buffer held in memory takes a hundredth of it). The suite opens a PGlite from this image a hundred and more
 * times a run, so it is read from the file once per process and each PGlite is given a copy of its own.
 */
class ImageBlob extends Blob {
  constructor(private readonly held: Uint8Array<ArrayBuffer>) {
    super([held]);
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    return this.held.slice().buffer;
  }
}

let image: Promise<Blob> | undefined;

export function migratedPgliteImage(): Promise<Blob> {
  image ??= (async () => {
    const file = imageFile();
    if (existsSync(file)) return new ImageBlob(new Uint8Array(readFileSync(file)));
    const database = await connectDatabase({ dataDir: 'memory://' });
    try {
      await migrate(database.db);
      const tarball = await database.dumpDataDir!();
      mkdirSync(CACHE, { recursive: true });
      const temporary = `${file}.${process.pid}.tmp`;
      writeFileSync(temporary, new Uint8Array(await tarball.arrayBuffer()));
      renameSync(temporary, file);
      return new ImageBlob(new Uint8Array(await tarball.arrayBuffer()));
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
  execFileSync('tar', ['-xf', imageFile(), '-C', dataDir], { stdio: 'ignore' });
}
