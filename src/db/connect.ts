import { Kysely, Migrator, PostgresDialect, sql, type Dialect } from 'kysely';
import type { PGlite } from '@electric-sql/pglite';
import type { Database } from './tables.js';
import { migrations } from './migrations/index.js';
import { hexToBytea } from './bytea-hex.js';
import { nameStatements } from './prepared.js';
import { setWriteGeneration, trackWrites, type TrackedClient, type WriteGeneration } from './write-generation.js';
import { GENERIC_PLANS, setReadConnections } from './read-connections.js';

/** Which engine holds the data; reported by management info and cluster status. */
export type DialectName = 'postgres' | 'pglite';

/** A connected database with what the rest of the service needs to know about it. */
export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: DialectName;
  /**
   * Subscribe to a PostgreSQL notification channel on a connection of its own (PostgreSQL only: PGlite is
   * one process, so there is nobody else to hear from). `onLost` is told when the connection drops, since
   * notifications sent meanwhile are lost; the subscription reconnects by itself and then calls `onRestored`
   * (from then on notifications arrive again).
   */
  listen?(
    channel: string,
    onMessage: (payload: string) => void,
    onLost: () => void,
    onRestored?: () => void,
  ): Promise<() => Promise<void>>;
  /** The connection pools now, for the metrics (PostgreSQL through `pg` pools only). */
  poolStats?(): DatabasePoolStats;
  /** PGlite only: its whole data directory as a tarball (what `loadDataDir` starts a new one from). */
  dumpDataDir?(): Promise<Blob>;
  /**
   * PGlite only: the write generation (write-generation.ts), moved by every statement of this process that
   * is not a registered pure read; the subject reads skip their statement while it has not moved.
   */
  writes?: WriteGeneration;
  close(): Promise<void>;
}

/** A `pg` pool's connections: open ones, idle ones among them, queries waiting for one, and the most it opens. */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

/** The process's two pools: statements, and the subject reads' own (generic plans: read-connections.ts). */
export type DatabasePoolStats = Record<'statements' | 'reads', PoolStats>;

/**
 * Connect to PostgreSQL through `pg` when a URL is given, otherwise open the embedded PGlite in `dataDir`
 * (`memory://` keeps it in memory, for tests). Drivers are imported lazily so a runtime that has only one of
 * them (Workers has no PGlite) never loads the other. `transient`: no connection outlives its query or
 * transaction, and no LISTEN (Cloudflare Workers; see transient-pool.ts).
 */
export async function connectDatabase(options: {
  url?: string;
  dataDir?: string;
  /** Connections of each of the two pools (BIMS_DATABASE_POOL_SIZE); default 10. */
  poolSize?: number;
  transient?: boolean;
  /** PGlite in memory only: start from this data directory (a `dumpDataDir` tarball) instead of an empty one. */
  loadDataDir?: Blob;
}): Promise<DatabaseHandle> {
  let dialect: Dialect;
  let name: DialectName;
  let listen: DatabaseHandle['listen'];
  let poolStats: DatabaseHandle['poolStats'];
  let dumpDataDir: DatabaseHandle['dumpDataDir'];
  let writes: WriteGeneration | undefined;
  let reads: Kysely<Database> | undefined;
  if (options.url && options.transient) {
    const pg = (await import('pg')).default;
    pg.types.setTypeParser(20, (value: string) => Number(value));
    const { transientPool } = await import('./transient-pool.js');
    dialect = new PostgresDialect({ pool: transientPool(pg, options.url) });
    name = 'postgres';
  } else if (options.url) {
    const pg = (await import('pg')).default;
    // int8 (count(*), bigserial) arrives as text by default; our counts and ids fit in a double.
    pg.types.setTypeParser(20, (value: string) => Number(value));
    const pool = new pg.Pool({ connectionString: options.url, max: options.poolSize ?? 10 });
    // An idle client that loses its server must not crash the process; the pool replaces it.
    pool.on('error', () => {});
    // Hot queries (src/db/prepared.ts) go as named statements, parsed once per connection.
    pool.on('connect', (client) => nameStatements(client));
    dialect = new PostgresDialect({ pool });
    // The subject reads' own connections, with generic plans (read-connections.ts says why). Opened as reads
    // need them: under a burst of reads of one kind, joined reads (joined-reads.ts) keep one or two busy.
    const readPool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      options: GENERIC_PLANS,
    });
    readPool.on('error', () => {});
    readPool.on('connect', (client) => nameStatements(client));
    reads = new Kysely<Database>({ dialect: new PostgresDialect({ pool: readPool }) });
    name = 'postgres';
    const statsOf = (p: InstanceType<typeof pg.Pool>) => ({
      total: p.totalCount,
      idle: p.idleCount,
      waiting: p.waitingCount,
      max: p.options.max ?? 10,
    });
    poolStats = () => ({ statements: statsOf(pool), reads: statsOf(readPool) });
    listen = async (channel, onMessage, onLost, onRestored) => {
      let client: InstanceType<typeof pg.Client> | null = null;
      let stopped = false;
      // A failed reconnection tries again (a client that never became current is ignored by `lost`).
      const retry = () => {
        if (stopped) return;
        setTimeout(() => void connect().then(() => onRestored?.(), retry), 1000);
      };
      const connect = async (): Promise<void> => {
        const c = new pg.Client({ connectionString: options.url });
        c.on('notification', (n) => {
          if (n.channel === channel && n.payload !== undefined) onMessage(n.payload);
        });
        const lost = () => {
          if (stopped || client !== c) return;
          client = null;
          onLost();
          retry();
        };
        c.on('error', lost);
        c.on('end', lost);
        try {
          await c.connect();
          await c.query(`LISTEN ${channel.replace(/[^a-z_]/g, '')}`);
        } catch (error) {
          await c.end().catch(() => {});
          throw error;
        }
        client = c;
        if (stopped) await c.end().catch(() => {}); // closed while reconnecting
      };
      await connect();
      return async () => {
        stopped = true;
        await client?.end().catch(() => {});
      };
    };
  } else {
    const { PGliteDialect } = await import('kysely-pglite-dialect');
    const opened = await openPglite(options);
    writes = opened.writes;
    dialect = new PGliteDialect(opened.client);
    dumpDataDir = async () => (await opened.client.dumpDataDir('none')) as Blob;
    name = 'pglite';
  }
  const db = new Kysely<Database>({ dialect });
  if (writes) setWriteGeneration(db, writes);
  if (reads) setReadConnections(db, reads);
  const close = async () => {
    await Promise.all([db.destroy(), reads?.destroy()]);
  };
  return { db, dialect: name, listen, poolStats, dumpDataDir, writes, close };
}

/** An open PGlite as this service uses it, with the write generation of every statement sent through it. */
export interface OpenedPglite {
  client: PGlite;
  writes: WriteGeneration;
}

/**
 * Open the embedded PGlite in `dataDir` (`memory://`, the default, keeps it in memory; `loadDataDir` then starts it
 * from a `dumpDataDir` tarball) with this service's parsers and its write generation tracked. connectDatabase
 * makes a handle over it; tests open a few and lend each to suite after suite (test/support/pglite-pool.ts).
 */
export async function openPglite(options: { dataDir?: string; loadDataDir?: Blob }): Promise<OpenedPglite> {
  const { PGlite } = await import('@electric-sql/pglite');
  const dataDir = options.dataDir ?? 'memory://';
  // One options object: PGlite.create(undefined, options) silently drops the options.
  const client = await PGlite.create({
    dataDir: dataDir === 'memory://' ? undefined : dataDir,
    ...(dataDir === 'memory://' && options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
    parsers: { 20: (value: string) => Number(value), 17: hexToBytea },
    // bytea parameters go as they are: PGlite then binds them in PostgreSQL's binary format (the raw bytes),
    // where hex text would double their size and cost an encode here and a decode inside PGlite's wasm.
    serializers: { 17: (value: unknown) => (value instanceof Uint8Array ? value : String(value)) as string },
  });
  keepOwnParsersOnly(client as unknown as { parsers: Record<number, unknown> }, [20, 17]);
  // Before anyone else holds the client: from here on every statement (migrations included) is counted.
  const writes = trackWrites(client as unknown as TrackedClient);
  return { client, writes };
}

/**
 * Types whose PGlite parser returns something other than the text (bool, numbers, json, dates) and arrays of
 * them; every other type is text either way.
 */
const PARSED_TYPES = [16, 21, 23, 26, 700, 701, 114, 3802, 1082, 1114, 1184];
const PARSED_ARRAYS = [1000, 1001, 1005, 1007, 1016, 1021, 1022, 1028, 199, 3807, 1182, 1115, 1185, 1009, 1015, 2951];

/**
 * PGlite copies its instance's table of result parsers for every query it answers (`{...parsers}`, 316
 * entries: about 0.17 ms a query, most of them arrays of types we never read). A type missing from the table
 * falls back to PGlite's built-in parser of that type, so the table needs our overrides (`own`), the base
 * types above (array parsers look their element's parser up in this table) and their arrays: PGlite parses
 * every result exactly as before, from a table a tenth the size.
 */
function keepOwnParsersOnly(client: { parsers: Record<number, unknown> }, own: number[]) {
  const all = client.parsers;
  const kept: Record<number, unknown> = {};
  for (const oid of [...own, ...PARSED_TYPES, ...PARSED_ARRAYS]) if (all[oid] !== undefined) kept[oid] = all[oid];
  client.parsers = kept;
}

/** Apply every pending migration; throws with the failing migration's name. */
export async function migrate(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`Migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** True when every known migration has been applied. */
export async function migrationsApplied(db: Kysely<Database>): Promise<boolean> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const all = await migrator.getMigrations();
  return all.every((m) => m.executedAt !== undefined);
}

/** The database server's version string, e.g. "PostgreSQL 15.19". */
export async function serverVersion(db: Kysely<Database>): Promise<string> {
  const { rows } = await sql<{ v: string }>`select current_setting('server_version') as v`.execute(db);
  return `PostgreSQL ${rows[0]?.v ?? 'unknown'}`;
}
