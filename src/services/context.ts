import type { Kysely } from 'kysely';
import type { Config } from '../config/config.js';
import type { DialectName } from '../db/connect.js';
import type { Database } from '../db/tables.js';
import type { Logger } from '../logger.js';

/** What every service function receives: the database and the process facts, never HTTP. */
export interface ServiceContext {
  db: Kysely<Database>;
  dialect: DialectName;
  config: Config;
  log: Logger;
  /** The clock, injectable so tests can move time (token expiry, leases). */
  now: () => Date;
  startedAt: Date;
  /** Identity of this process among the nodes sharing the database. */
  node: { id: string; hostname: string; runtime: string; version: string };
}
