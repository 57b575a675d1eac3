import { z } from '../schemas/common.js';
import { CountSchema } from '../schemas/common.js';
import {
  AccountModel,
  AccountsCountQuery,
  AccountsQuery,
  ChangeAccountRequest,
  CreateAccountRequest,
  DeleteAccountsRequest,
  DeleteAccountsResult,
} from '../schemas/accounts.js';
import {
  changeAccount,
  countAccounts,
  createAccount,
  deleteAccounts,
  listAccounts,
} from '../services/accounts/accounts.js';
import { defineOperation } from './types.js';

const area = 'Accounts';
const admin = ['admin'] as const;

/** Seed section 4.1: accounts, on the admin surface only. */
export const accountOperations = [
  defineOperation({
    id: 'createAccount',
    method: 'post',
    path: '/accounts/create',
    surfaces: admin,
    area,
    problems: { 409: 'An account of that user name exists' },
    summary: 'Creates an account',
    request: { body: CreateAccountRequest },
    status: 201,
    response: { description: 'The new account', schema: AccountModel },
    handle: ({ services, body }) => createAccount(services.ctx, body),
  }),
  defineOperation({
    id: 'changeAccount',
    method: 'post',
    path: '/accounts/change',
    surfaces: admin,
    area,
    problems: { 409: 'The new user name is taken, or the change would leave no enabled ADMIN account' },
    summary: 'Changes an account',
    description:
      'Renames, re-roles, enables or disables an account, or resets its password. A new password or role, or disabling, ends every token the account holds at once (access tokens of every grant, refresh tokens, unredeemed codes); deleting does too.',
    request: { body: ChangeAccountRequest },
    response: { description: 'The changed account', schema: AccountModel },
    handle: ({ services, body }) => changeAccount(services.ctx, body),
  }),
  defineOperation({
    id: 'deleteAccounts',
    method: 'delete',
    path: '/accounts/delete',
    surfaces: admin,
    area,
    problems: { 409: 'The deletion would leave no enabled ADMIN account' },
    summary: 'Deletes accounts',
    description: 'All or nothing; refuses to delete the last enabled ADMIN.',
    request: { body: DeleteAccountsRequest },
    response: { description: 'The deleted accounts', schema: DeleteAccountsResult },
    handle: ({ services, body }) => deleteAccounts(services.ctx, body),
  }),
  defineOperation({
    id: 'getAccounts',
    method: 'get',
    path: '/accounts',
    surfaces: admin,
    area,
    summary: 'Lists accounts according to a filter',
    request: { query: AccountsQuery },
    response: { description: 'A page of accounts', schema: z.array(AccountModel) },
    handle: ({ services, query }) => listAccounts(services.ctx, query),
  }),
  defineOperation({
    id: 'getAccountsCount',
    method: 'get',
    path: '/accounts/count',
    surfaces: admin,
    area,
    summary: 'Counts accounts',
    request: { query: AccountsCountQuery },
    response: { description: 'How many accounts match', schema: CountSchema },
    handle: ({ services, query }) => countAccounts(services.ctx, query),
  }),
];
