/**
 * PGlite's write generation: a counter per database that moves with every statement that may have changed
 * something, so that a read can tell, without asking the database, that nothing was written since it last
 * asked. PGlite is one process and every statement of this process goes through our one client (connect.ts),
 * so a counter moved by that client sees every write there is.
 *
 * Conservative by construction: every entry of the client moves the counter (before the statement is sent
 * and again once it is answered), except `query` with a SQL text registered here as a pure read
 * ({@link pureRead}: only the subject read model's own statements). An unknown statement, a read of anything
 * else, `begin`, `commit`, `rollback`, a migration, `exec`, PGlite's own `transaction`, LISTEN, a dump of the
 * data directory: all count as writes. Such a read that is wrongly counted as a write costs a statement later;
 * a write counted as a read would give stale answers, so the list of pure reads is short and exact.
 *
 * PostgreSQL has none: other nodes write to the same database without telling us.
 */

/** SQL texts of statements that change nothing: the subject reads (select only, no volatile function). */
const pureReads = new Set<string>();

/** Register `query`'s SQL text as a pure read (a statement that writes nothing) and answer it. */
export function pureRead<Q extends { readonly sql: string }>(query: Q): Q {
  pureReads.add(query.sql);
  return query;
}

export class WriteGeneration {
  private value = 0;
  /** Statements other than pure reads sent and not yet answered. */
  private writing = 0;
  /** Statements sent, of every kind (tests and diagnostics: a read answered from memory sends none). */
  statements = 0;

  /**
   * The generation now, if no statement that may write is under way; otherwise undefined. A read that saw
   * the same quiet generation before it sent its statement and after its answer came back saw every write
   * that was answered before it and none other: its answer is exact for as long as the generation stays.
   */
  get quiet(): number | undefined {
    return this.writing === 0 ? this.value : undefined;
  }

  /** Run a statement that may write: the generation moves before it is sent and again when it is answered. */
  write<T>(run: () => Promise<T>): Promise<T> {
    this.begin();
    let answer: Promise<T>;
    try {
      answer = run();
    } catch (error) {
      this.end();
      throw error;
    }
    return answer.finally(() => this.end());
  }

  /** The same for a synchronous entry. */
  writeSync<T>(run: () => T): T {
    this.begin();
    try {
      return run();
    } finally {
      this.end();
    }
  }

  /** Run a registered pure read: the generation stays. */
  read<T>(run: () => Promise<T>): Promise<T> {
    this.statements++;
    return run();
  }

  private begin() {
    this.statements++;
    this.writing++;
    this.value++;
  }

  private end() {
    this.writing--;
    this.value++;
  }
}

/** The methods of a PGlite client the wrapper replaces (as they are on `PGlite` 0.4). */
type Method = (...args: never[]) => unknown;
export type TrackedClient = { query: (text: string, ...rest: never[]) => Promise<unknown> } & Record<string, unknown>;

/** Every other public entry that runs SQL or touches the data: each counts as a write. */
const ENTRIES = [
  'exec',
  'sql',
  'transaction',
  'describeQuery',
  'listen',
  'unlisten',
  'refreshArrayTypes',
  'dumpDataDir',
  'clone',
  'close',
] as const;
/**
 * The wire-protocol entries: PGlite's own `query` calls them for every message of a statement, so they count
 * as writes only when no pure read is running (a caller using them directly, which this service never does).
 */
const PROTOCOL = ['execProtocol', 'execProtocolStream', 'execProtocolRaw', 'execProtocolRawStream'] as const;

/**
 * Make every statement of `client` move the answered generation, except the pure reads' `query`. Replaces the
 * client's methods on the instance (the class's own methods stay as they are for every other instance).
 */
export function trackWrites(client: TrackedClient): WriteGeneration {
  const generation = new WriteGeneration();
  let readsRunning = 0;
  const own = client as Record<string, unknown>;
  const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
  own.query = (text: string, ...rest: unknown[]) => {
    if (!pureReads.has(text)) return generation.write(() => query(text, ...rest));
    readsRunning++;
    return generation.read(() => query(text, ...rest)).finally(() => readsRunning--);
  };
  for (const name of ENTRIES) {
    const original = own[name] as Method | undefined;
    if (typeof original !== 'function') continue;
    own[name] = (...args: never[]) => generation.write(async () => original.apply(client, args));
  }
  for (const name of PROTOCOL) {
    const original = own[name] as Method | undefined;
    if (typeof original !== 'function') continue;
    own[name] = (...args: never[]) =>
      readsRunning > 0 ? original.apply(client, args) : generation.write(async () => original.apply(client, args));
  }
  const rawSync = own.execProtocolRawSync as Method | undefined;
  if (typeof rawSync === 'function')
    own.execProtocolRawSync = (...args: never[]) =>
      readsRunning > 0 ? rawSync.apply(client, args) : generation.writeSync(() => rawSync.apply(client, args));
  return generation;
}

/** The write generation of a database handle's Kysely instance (PGlite only; undefined on PostgreSQL). */
const generations = new WeakMap<object, WriteGeneration>();

export function setWriteGeneration(db: object, generation: WriteGeneration): void {
  generations.set(db, generation);
}

export function writeGenerationOf(db: object): WriteGeneration | undefined {
  return generations.get(db);
}
