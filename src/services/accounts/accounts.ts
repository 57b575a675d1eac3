import type { z } from 'zod';
import { sql, type Selectable } from 'kysely';
import { hashPassword } from '../../auth/password.js';
import type { AccountsTable } from '../../db/tables.js';
import type { AccountsQuery, ChangeAccountRequest, CreateAccountRequest, DeleteAccountsRequest } from '../../schemas/accounts.js';
import type { ServiceContext } from '../context.js';
import { DomainError, conflict, notFound } from '../errors.js';
import { escapeLike, sortColumn } from '../query-helpers.js';
import { credentialsChanged } from '../auth/credential-cache.js';

/** An account as clients see it: never the hash. */
export function presentAccount(row: Selectable<AccountsTable>) {
  return {
    id: row.id,
    username: row.username,
    role: row.role,
    enabled: row.enabled,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** Create an account; 409 if the user name is taken. */
export async function createAccount(ctx: ServiceContext, input: z.output<typeof CreateAccountRequest>) {
  const hash = await hashPassword(input.password, ctx.config.BIMS_PASSWORD_ITERATIONS);
  const row = await ctx.db
    .insertInto('accounts')
    .values({ username: input.username, password_hash: hash, role: input.role, enabled: input.enabled, created_at: ctx.now(), updated_at: ctx.now() })
    .onConflict((oc) => oc.column('username').doNothing())
    .returningAll()
    .executeTakeFirst();
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
    const current = await trx.selectFrom('accounts').selectAll().where('id', '=', input.id).forUpdate().executeTakeFirst();
    if (!current) throw notFound(`Account ${input.id}`);
    if (input.username && input.username !== current.username) {
      const taken = await trx.selectFrom('accounts').select('id').where('username', '=', input.username).executeTakeFirst();
      if (taken) throw conflict(`An account named '${input.username}' already exists`);
    }
    const losesAdmin = current.role === 'ADMIN' && current.enabled && ((input.role && input.role !== 'ADMIN') || input.enabled === false);
    // What a token may do rests on the password it was won with, the role it was scoped by and the account
    // being enabled: a change of any of them ends every token the account holds (their version no longer
    // matches; see AuthService). A rename or a no-op change keeps them.
    const endsTokens = hash !== undefined || (input.role !== undefined && input.role !== current.role) || (input.enabled === false && current.enabled);
    if (losesAdmin) await assertAnotherAdmin(trx, [current.id]);
    const row = await trx
      .updateTable('accounts')
      .set({
        ...(input.username ? { username: input.username } : {}),
        ...(input.role ? { role: input.role } : {}),
        ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
        ...(hash ? { password_hash: hash } : {}),
        ...(endsTokens ? { credential_version: sql<number>`credential_version + 1` } : {}),
        updated_at: ctx.now(),
      })
      .where('id', '=', input.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (endsTokens) {
      // The version already ends them; revoking the rows too keeps the table truthful for anyone reading it.
      await trx.updateTable('refresh_tokens').set({ revoked_at: ctx.now() }).where('account_id', '=', row.id).where('revoked_at', 'is', null).execute();
    }
    return presentAccount(row);
  });
  // What this process cached of the account goes (its name and role show in the principal too).
  credentialsChanged();
  return changed;
}

/** Delete accounts named by id or user name, all or none; never the last enabled ADMIN. */
export async function deleteAccounts(ctx: ServiceContext, input: z.output<typeof DeleteAccountsRequest>) {
  const deleted = await ctx.db.transaction().execute(async (trx) => {
    const rows: Selectable<AccountsTable>[] = [];
    for (const ref of input.accounts) {
      let query = trx.selectFrom('accounts').selectAll();
      query = ref.id !== undefined ? query.where('id', '=', ref.id) : query.where('username', '=', ref.username!);
      const row = await query.forUpdate().executeTakeFirst();
      if (!row) throw notFound(`Account ${ref.id ?? `'${ref.username}'`}`);
      if (!rows.some((r) => r.id === row.id)) rows.push(row);
    }
    if (rows.some((r) => r.role === 'ADMIN' && r.enabled)) await assertAnotherAdmin(trx, rows.map((r) => r.id));
    await trx.deleteFrom('accounts').where('id', 'in', rows.map((r) => r.id)).execute();
    ctx.log.info('accounts deleted', { accountIds: rows.map((r) => r.id) });
    return { deleted: rows.map(presentAccount) };
  });
  credentialsChanged();
  return deleted;
}

async function assertAnotherAdmin(trx: ServiceContext['db'], excluding: number[]) {
  const other = await trx
    .selectFrom('accounts')
    .select('id')
    .where('role', '=', 'ADMIN')
    .where('enabled', '=', true)
    .where('id', 'not in', excluding)
    .limit(1)
    .executeTakeFirst();
  if (!other) throw new DomainError('conflict', 'This would leave no enabled ADMIN account; create another ADMIN first');
}

type AccountFilter = Pick<z.output<typeof AccountsQuery>, 'username' | 'role' | 'enabled'>;

function filtered(ctx: ServiceContext, filter: AccountFilter) {
  let query = ctx.db.selectFrom('accounts');
  if (filter.username) query = query.where('username', 'like', `${escapeLike(filter.username)}%`);
  if (filter.role) query = query.where('role', '=', filter.role);
  if (filter.enabled !== undefined) query = query.where('enabled', '=', filter.enabled);
  return query;
}

const accountSort = { id: 'id', username: 'username', role: 'role', createdAt: 'created_at', updatedAt: 'updated_at' } as const;

/** List accounts by user name prefix, role and enabled flag, paged. */
export async function listAccounts(ctx: ServiceContext, query: z.output<typeof AccountsQuery>) {
  const [column, direction] = sortColumn(accountSort, query.sort, 'id');
  const rows = await filtered(ctx, query)
    .selectAll()
    .orderBy(column, direction)
    .orderBy('id', 'asc')
    .limit(query.size)
    .offset(query.page * query.size)
    .execute();
  return rows.map(presentAccount);
}

export async function countAccounts(ctx: ServiceContext, filter: AccountFilter) {
  const row = await filtered(ctx, filter).select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  return { count: Number(row.count) };
}

/**
 * First start: create `admin` with the configured password, or a random one that is printed once.
 * Does nothing when any ADMIN exists.
 */
export async function ensureInitialAdmin(ctx: ServiceContext, announce: (password: string) => void): Promise<void> {
  const admin = await ctx.db.selectFrom('accounts').select('id').where('role', '=', 'ADMIN').limit(1).executeTakeFirst();
  if (admin) return;
  const configured = ctx.config.BIMS_ADMIN_PASSWORD;
  const password = configured ?? Array.from(crypto.getRandomValues(new Uint8Array(18)), (b) => b.toString(36).padStart(2, '0')).join('').slice(0, 24);
  const hash = await hashPassword(password, ctx.config.BIMS_PASSWORD_ITERATIONS);
  const inserted = await ctx.db
    .insertInto('accounts')
    .values({ username: 'admin', password_hash: hash, role: 'ADMIN', enabled: true, created_at: ctx.now(), updated_at: ctx.now() })
    .onConflict((oc) => oc.column('username').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted && !configured) announce(password);
}
