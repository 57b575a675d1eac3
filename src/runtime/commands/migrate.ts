/**
 * `npm run migrate`: apply pending migrations to the configured database (DATABASE_URL, else PGlite in
 * BIMS_DATA_DIR) and exit. The server also migrates on start; this is for deploy pipelines that migrate first.
 */
import { ConfigError, loadConfig } from '../../config/config.js';
import { connectDatabase, migrate } from '../../db/connect.js';

try {
  const config = loadConfig(process.env);
  const database = await connectDatabase({ url: config.DATABASE_URL, dataDir: config.BIMS_DATA_DIR });
  try {
    const applied = await migrate(database.db);
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'the database is up to date');
  } finally {
    await database.close();
  }
} catch (error) {
  console.error(
    error instanceof ConfigError
      ? error.message
      : `migration failed: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exit(1);
}
