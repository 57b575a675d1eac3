import { sql, type Selectable } from 'kysely';
import { json } from '../json.js';
import type { Database } from '../tables.js';
import { asDate } from './decode.js';
import type { Queryable } from './queryable.js';

/** Setting overrides (table `settings`): one row per overridden key, its value as jsonb. */

type SettingRow = Selectable<Database['settings']>;

/**
 * Key of the transaction-scoped advisory lock every settings write takes ("BIMS" and 0x53, 'S'), so that a
 * cross-key rule is checked and the write made as one step across every process on the database. PGlite
 * runs transactions one at a time anyway; the lock is the same statement there.
 */
const SETTINGS_WRITE_LOCK = 0x42494d53_0053;

/** Take the settings write lock for the rest of the transaction `trx` (waits for the holder's commit). */
export async function lockSettingsWrites(trx: Queryable): Promise<void> {
  await sql`select pg_advisory_xact_lock(${SETTINGS_WRITE_LOCK})`.execute(trx);
}

/*
 * A value is taken as the driver gives it, not through `parsedJson`: both drivers parse jsonb, and a setting's
 * value may itself be a string ("PASSIVE"), which parsing again would break.
 */

/** Every stored override. */
export async function listSettingOverrides(db: Queryable): Promise<SettingRow[]> {
  const rows = await db.selectFrom('settings').selectAll().execute();
  return rows.map((row) => ({ ...row, updated_at: asDate(row.updated_at) }));
}

/** The stored value of one key; undefined when the key is not overridden. */
export async function findSettingValue(db: Queryable, key: string): Promise<{ value: unknown } | undefined> {
  return db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
}

/** Store a key's value, inserted or replaced. */
export async function upsertSetting(db: Queryable, key: string, value: unknown, at: Date): Promise<void> {
  await db
    .insertInto('settings')
    .values({ key, value: json(value), updated_at: at })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: json(value), updated_at: at }))
    .execute();
}

export async function deleteSetting(db: Queryable, key: string): Promise<void> {
  await db.deleteFrom('settings').where('key', '=', key).execute();
}

/** Delete every override; answers how many there were. */
export async function deleteAllSettings(db: Queryable): Promise<number> {
  const result = await db.deleteFrom('settings').executeTakeFirst();
  return Number(result.numDeletedRows);
}
