import { Role, dbId, pagingQuery, queryBool, z } from './common.js';

const MIN_PASSWORD_LENGTH = 8;
const username = z
  .string()
  .min(1, 'must not be empty')
  .max(64, 'must be at most 64 characters')
  .regex(/^[A-Za-z0-9._@-]+$/, 'may contain only letters, digits and . _ @ -');
const password = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(1024, 'must be at most 1024 characters');

export const AccountModel = z
  .object({
    id: z.number().int(),
    username: z.string(),
    role: Role,
    enabled: z.boolean(),
    createdAt: z.string().openapi({ format: 'date-time' }),
    updatedAt: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('AccountModel');

export const CreateAccountRequest = z
  .strictObject({ username, password, role: Role, enabled: z.boolean().default(true) })
  .openapi('CreateAccountRequest');

export const ChangeAccountRequest = z
  .strictObject({
    id: dbId,
    username: username.optional(),
    password: password.optional(),
    role: Role.optional(),
    enabled: z.boolean().optional(),
  })
  .openapi('ChangeAccountRequest');

export const DeleteAccount = z
  .strictObject({ id: dbId.optional(), username: z.string().min(1).max(64).optional() })
  .refine((v) => v.id !== undefined || v.username !== undefined, 'must give id or username')
  // The refinement above as JSON Schema states it for tools: at least one of the two.
  .openapi('DeleteAccount', {
    description: 'One account to delete, by id or by user name.',
    anyOf: [{ required: ['id'] }, { required: ['username'] }],
  });

export const DeleteAccountsRequest = z
  .strictObject({ accounts: z.array(DeleteAccount).min(1).max(1000) })
  .openapi('DeleteAccountsRequest');

export const DeleteAccountsResult = z.object({ deleted: z.array(AccountModel) }).openapi('DeleteAccountsResult');

const accountFilter = {
  username: z.string().min(1).max(64).optional().openapi({ description: 'User name prefix' }),
  role: Role.optional(),
  enabled: queryBool.optional(),
};
export const AccountsQuery = z.strictObject({
  ...accountFilter,
  ...pagingQuery(['id', 'username', 'role', 'createdAt', 'updatedAt']),
});
export const AccountsCountQuery = z.strictObject(accountFilter);
