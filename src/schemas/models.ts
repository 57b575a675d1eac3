import type { z } from 'zod';
import type { Surface } from '../operations/types.js';
import { AccessTokenResponse, LoginResponse } from './auth.js';
import { ExceptionModel } from './exceptions.js';
import { DbClusterStatus } from './management.js';
import { AccountModel, ChangeAccountRequest, CreateAccountRequest, DeleteAccount, DeleteAccountsRequest } from './accounts.js';

/**
 * The named models of the seed's section 2 with the surfaces that show them; each becomes a component of
 * the OpenAPI document of those surfaces under exactly its seed name.
 */
export const namedModels: { name: string; schema: z.ZodType; surfaces: readonly Surface[] }[] = [
  { name: 'AccessTokenResponse', schema: AccessTokenResponse, surfaces: ['admin', 'root', 'user'] },
  { name: 'AccountModel', schema: AccountModel, surfaces: ['admin'] },
  { name: 'ChangeAccountRequest', schema: ChangeAccountRequest, surfaces: ['admin'] },
  { name: 'CreateAccountRequest', schema: CreateAccountRequest, surfaces: ['admin'] },
  { name: 'DbClusterStatus', schema: DbClusterStatus, surfaces: ['admin', 'root'] },
  { name: 'DeleteAccount', schema: DeleteAccount, surfaces: ['admin'] },
  { name: 'DeleteAccountsRequest', schema: DeleteAccountsRequest, surfaces: ['admin'] },
  { name: 'ExceptionModel', schema: ExceptionModel, surfaces: ['admin', 'root'] },
  { name: 'LoginResponse', schema: LoginResponse, surfaces: ['admin', 'root', 'user'] },
];
