import type { Kysely } from 'kysely';
import type { Database } from './tables.js';

/**
 * PostgreSQL: the connections the subject reads' statements run on outside transactions, a pool of their own
 * whose sessions plan every prepared statement once, generically ({@link GENERIC_PLANS}).
 *
 * Why: PostgreSQL's default (`plan_cache_mode = auto`) plans a prepared statement anew for its parameters on
 * every execution unless its generic plan is estimated no dearer than the custom ones. A subject read names its
 * subjects as an array (`s.subject_id = any($names)`), which a generic plan estimates at ten rows against the
 * custom plan's one, so PostgreSQL re-planned the read on every execution: measured with pgbench on one
 * connection, 0.20-0.31 ms a statement against 0.07-0.09 ms with its generic plan (the same rows; 0 generic plans
 * in 2,000 executions per `pg_prepared_statements` before, 2,000 after). The generic plans of these reads are the
 * custom ones with the names left open (an index scan of the names, or a page in its sort order).
 *
 * Why not the main pool: the setting is per session and applies to every statement with parameters, and the other
 * statements (lists with a LIKE prefix, ranges of dates, whatever Kysely builds) may well need their values planned.
 * Only the statements of with-samples.ts run here, as prepared statements (src/db/prepared.ts), outside
 * transactions (a transaction's reads stay on its own connection, where they see its writes).
 */
export const GENERIC_PLANS = '-c plan_cache_mode=force_generic_plan';

const readers = new WeakMap<object, Kysely<Database>>();

/** Make `reads` the connections the subject reads of `db` run on (connect.ts, PostgreSQL through `pg`). */
export function setReadConnections(db: object, reads: Kysely<Database>): void {
  readers.set(db, reads);
}

/** Where a subject read on `db` outside a transaction runs: its read connections, or `db` itself when it has none. */
export function readConnectionsOf(db: Kysely<Database>): Kysely<Database> {
  return readers.get(db) ?? db;
}
