import type { z } from 'zod';
import { hashPassword } from '../../auth/password.js';
import {
  accountNameTaken,
  anotherEnabledAdminExists,
  anyAdminExists,
  countAccountsMatching,
  deleteAccountsByIds,
  insertAccountUnlessNameTaken,
  listAccountsPage,
  lockAccount,
  updateAccount,
  type AccountFilter,
  type AccountRow,
} from '../../db/repositories/accounts.js';
import { revokeAccountRefreshTokens } from '../../db/repositories/auth/refresh-tokens.js';
import type { Queryable } from '../../db/repositories/queryable.js';
import type {
  AccountsQuery,
  ChangeAccountRequest,
  CreateAccountRequest,
  DeleteAccountsRequest,
} from '../../schemas/accounts.js';
import type { ServiceContext } from '../context.js';
import { DomainError, conflict, notFound } from '../errors.js';
import { sortColumn } from '../query-helpers.js';
import { credentialsChanged } from '../auth/credential-cache.js';

/** An account as clients see it: never the hash. */
function presentAccount(row: AccountRow) {
  return {
    id: row.id,
    username: row.username,
    role: row.role,
    enabled: row.enabled,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Create an account; 409 if the user name is taken. */
export async function createAccount(ctx: ServiceContext, input: z.output<typeof CreateAccountRequest>) {
  const hash = await hashPassword(input.password, ctx.config.BIMS_PASSWORD_ITERATIONS);
  const row = await insertAccountUnlessNameTaken(ctx.db, {
    username: input.username,
    password_hash: hash,
    role: input.role,
    enabled: input.enabled,
    created_at: ctx.now(),
    updated_at: ctx.now(),
  });
  if (!row) throw conflict(`An account named '${input.username}' already exists`);
  ctx.log.info('account created', { accountId: row.id, role: row.role });
  return presentAccount(row);
}

/**
 * Rename, re-role, enable/disable or reset the password of an account. Refuses to leave the service without
 * an enabled ADMIN.
 */
export async function changeAccount(ctx: ServiceContext, input: z.output<typeof ChangeAccountRequest>) {
  const hash = input.password ? await hashPassword(input.password, ctx.config.BIMS_PASSWORD_ITERATIONS) : undefined;
  const changed = await ctx.db.transaction().execute(async (trx) => {
    const current = await lockAccount(trx, { id: input.id });
    if (!current) throw notFound(`Account ${input.id}`);
    if (input.username && input.username !== current.username) {
      if (await accountNameTaken(trx, input.username))
        throw conflict(`An account named '${input.username}' already exists`);
    }
    const losesAdmin =
      current.role === 'ADMIN' &&
      current.enabled &&
      ((input.role && input.role !== 'ADMIN') || input.enabled === false);
    // What a token may do rests on the password it was won with, the role it was scoped by and the account
    // being enabled: a change of any of them ends every token the account holds (their version no longer
    // matches; see AuthService). A rename or a no-op change keeps them.
    const endsTokens =
      hash !== undefined ||
      (input.role !== undefined && input.role !== current.role) ||
      (input.enabled === false && current.enabled);
    if (losesAdmin) await assertAnotherAdmin(trx, [current.id]);
    const changes = {
      ...(input.username ? { username: input.username } : {}),
      ...(input.role ? { role: input.role } : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
      ...(hash ? { password_hash: hash } : {}),
      updated_at: ctx.now(),
    };
    const row = await updateAccount(trx, input.id, changes, endsTokens);
    // The version already ends them; revoking the rows too keeps the table truthful for anyone reading it.
    if (endsTokens) await revokeAccountRefreshTokens(trx, row.id, ctx.now());
    return presentAccount(row);
  });
  // What this process cached of the account goes (its name and role show in the principal too).
  credentialsChanged();
  return changed;
}

/** Delete accounts named by id or user name, all or none; never the last enabled ADMIN. */
export async function deleteAccounts(ctx: ServiceContext, input: z.output<typeof DeleteAccountsRequest>) {
  const deleted = await ctx.db.transaction().execute(async (trx) => {
    const rows: AccountRow[] = [];
    for (const ref of input.accounts) {
      const row = await lockAccount(trx, ref.id !== undefined ? { id: ref.id } : { username: ref.username! });
      if (!row) throw notFound(`Account ${ref.id ?? `'${ref.username}'`}`);
      if (!rows.some((r) => r.id === row.id)) rows.push(row);
    }
    if (rows.some((r) => r.role === 'ADMIN' && r.enabled))
      await assertAnotherAdmin(
        trx,
        rows.map((r) => r.id),
      );
    await deleteAccountsByIds(
      trx,
      rows.map((r) => r.id),
    );
    ctx.log.info('accounts deleted', { accountIds: rows.map((r) => r.id) });
    return { deleted: rows.map(presentAccount) };
  });
  credentialsChanged();
  return deleted;
}

async function assertAnotherAdmin(trx: Queryable, excluding: number[]) {
  if (!(await anotherEnabledAdminExists(trx, excluding))) {
    throw new DomainError('conflict', 'This would leave no enabled ADMIN account; create another ADMIN first');
  }
}

type AccountsFilterQuery = Pick<z.output<typeof AccountsQuery>, 'username' | 'role' | 'enabled'>;

/** The query's filter in the repository's words (the user name is a prefix). */
const filterOf = (query: AccountsFilterQuery): AccountFilter => ({
  usernamePrefix: query.username,
  role: query.role,
  enabled: query.enabled,
});

const accountSort = {
  id: 'id',
  username: 'username',
  role: 'role',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
} as const;

/** List accounts by user name prefix, role and enabled flag, paged. */
export async function listAccounts(ctx: ServiceContext, query: z.output<typeof AccountsQuery>) {
  const [column, direction] = sortColumn(accountSort, query.sort, 'id');
  const rows = await listAccountsPage(
    ctx.db,
    filterOf(query),
    { column, direction },
    { page: query.page, size: query.size },
  );
  return rows.map(presentAccount);
}

export async function countAccounts(ctx: ServiceContext, filter: AccountsFilterQuery) {
  return { count: await countAccountsMatching(ctx.db, filterOf(filter)) };
}

/**
 * First start: create `admin` with the configured password, or a random one that is printed once.
 * Does nothing when any ADMIN exists.
 */
export async function ensureInitialAdmin(ctx: ServiceContext, announce: (password: string) => void): Promise<void> {
  if (await anyAdminExists(ctx.db)) return;
  const configured = ctx.config.BIMS_ADMIN_PASSWORD;
  const password =
    configured ??
    Array.from(crypto.getRandomValues(new Uint8Array(18)), (b) => b.toString(36).padStart(2, '0'))
      .join('')
      .slice(0, 24);
  const hash = await hashPassword(password, ctx.config.BIMS_PASSWORD_ITERATIONS);
  const inserted = await insertAccountUnlessNameTaken(ctx.db, {
    username: 'admin',
    password_hash: hash,
    role: 'ADMIN',
    enabled: true,
    created_at: ctx.now(),
    updated_at: ctx.now(),
  });
  if (inserted && !configured) announce(password);
}
