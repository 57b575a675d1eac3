import { sql, type Insertable, type Selectable } from 'kysely';
import type { Role } from '../../auth/roles.js';
import type { Database } from '../tables.js';
import { asDate } from './decode.js';
import { likePrefix } from './like.js';
import { countRows, sortedPage, type PageWindow } from './paging.js';
import type { Queryable } from './queryable.js';

/** Accounts (table `accounts`): the people and integrations that sign in. */

export type AccountRow = Selectable<Database['accounts']>;

function decoded(row: AccountRow): AccountRow {
  return { ...row, created_at: asDate(row.created_at), updated_at: asDate(row.updated_at) };
}

/** What a password check needs of an account, by user name. */
export async function findAccountForLogin(
  db: Queryable,
  username: string,
): Promise<
  Pick<AccountRow, 'id' | 'username' | 'role' | 'enabled' | 'password_hash' | 'credential_version'> | undefined
> {
  return db
    .selectFrom('accounts')
    .select(['id', 'username', 'role', 'enabled', 'password_hash', 'credential_version'])
    .where('username', '=', username)
    .executeTakeFirst();
}

/** What an OAuth grant needs of the account it acts for (never the password hash). */
export async function findAccountForGrant(
  db: Queryable,
  id: number,
): Promise<Pick<AccountRow, 'id' | 'username' | 'role' | 'enabled' | 'credential_version'> | undefined> {
  return db
    .selectFrom('accounts')
    .select(['id', 'username', 'role', 'enabled', 'credential_version'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Insert an account; undefined when its user name is taken (nothing is written then). */
export async function insertAccountUnlessNameTaken(
  db: Queryable,
  account: Insertable<Database['accounts']>,
): Promise<AccountRow | undefined> {
  const row = await db
    .insertInto('accounts')
    .values(account)
    .onConflict((oc) => oc.column('username').doNothing())
    .returningAll()
    .executeTakeFirst();
  return row && decoded(row);
}

/** Read an account by id or user name and lock its row (FOR UPDATE) until the transaction ends. */
export async function lockAccount(
  db: Queryable,
  ref: { id: number } | { username: string },
): Promise<AccountRow | undefined> {
  const query = db.selectFrom('accounts').selectAll();
  const row = await ('id' in ref ? query.where('id', '=', ref.id) : query.where('username', '=', ref.username))
    .forUpdate()
    .executeTakeFirst();
  return row && decoded(row);
}

export async function accountNameTaken(db: Queryable, username: string): Promise<boolean> {
  return (
    (await db.selectFrom('accounts').select('id').where('username', '=', username).executeTakeFirst()) !== undefined
  );
}

/**
 * Change an account. `endTokens` raises its credential version (in the same statement, so concurrent changes
 * each raise it): tokens issued under the old version stop working.
 */
export async function updateAccount(
  db: Queryable,
  id: number,
  changes: { username?: string; role?: Role; enabled?: boolean; password_hash?: string; updated_at: Date },
  endTokens: boolean,
): Promise<AccountRow> {
  const row = await db
    .updateTable('accounts')
    .set({ ...changes, ...(endTokens ? { credential_version: sql<number>`credential_version + 1` } : {}) })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return decoded(row);
}

export async function deleteAccountsByIds(db: Queryable, ids: number[]): Promise<void> {
  await db.deleteFrom('accounts').where('id', 'in', ids).execute();
}

/** Whether an enabled ADMIN other than these accounts exists. */
export async function anotherEnabledAdminExists(db: Queryable, excluding: number[]): Promise<boolean> {
  const other = await db
    .selectFrom('accounts')
    .select('id')
    .where('role', '=', 'ADMIN')
    .where('enabled', '=', true)
    .where('id', 'not in', excluding)
    .limit(1)
    .executeTakeFirst();
  return other !== undefined;
}

/** Whether any ADMIN exists, enabled or not. */
export async function anyAdminExists(db: Queryable): Promise<boolean> {
  return (
    (await db.selectFrom('accounts').select('id').where('role', '=', 'ADMIN').limit(1).executeTakeFirst()) !== undefined
  );
}

/** A filter of the account list; `usernamePrefix` is matched literally (LIKE wildcards escaped). */
export interface AccountFilter {
  usernamePrefix?: string;
  role?: Role;
  enabled?: boolean;
}

function matching(db: Queryable, filter: AccountFilter) {
  let query = db.selectFrom('accounts');
  if (filter.usernamePrefix) query = query.where('username', 'like', likePrefix(filter.usernamePrefix));
  if (filter.role) query = query.where('role', '=', filter.role);
  if (filter.enabled !== undefined) query = query.where('enabled', '=', filter.enabled);
  return query;
}

/** The columns the account list sorts by. */
type AccountSortColumn = 'id' | 'username' | 'role' | 'created_at' | 'updated_at';

/** One page of the accounts a filter matches, sorted by a column and then by id, ascending. */
export async function listAccountsPage(
  db: Queryable,
  filter: AccountFilter,
  order: { column: AccountSortColumn; direction: 'asc' | 'desc' },
  window: PageWindow,
): Promise<AccountRow[]> {
  const rows = await sortedPage(matching(db, filter).selectAll(), { ...order, tieDirection: 'asc' }, window).execute();
  return rows.map(decoded);
}

export async function countAccountsMatching(db: Queryable, filter: AccountFilter): Promise<number> {
  return countRows(matching(db, filter));
}
