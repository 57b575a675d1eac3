import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../tables.js';

/**
 * What a repository function runs its SQL on: the database, or a transaction a service opened
 * (`ctx.db.transaction().execute((trx) => ...)`). Services decide where a transaction begins and ends;
 * repositories only say what to read or write in it.
 */
export type Queryable = Kysely<Database> | Transaction<Database>;
