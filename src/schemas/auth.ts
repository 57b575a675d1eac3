import { z } from './common.js';

export const LoginRequest = z
  .strictObject({ username: z.string().min(1).max(64), password: z.string().min(1).max(1024) })
  .openapi('LoginRequest');

export const LoginResponse = z
  .object({
    authenticationType: z.enum(['BASIC', 'BEARER']).openapi({ description: 'How the caller authenticated' }),
    username: z.string(),
    role: z.enum(['ADMIN', 'ADJUDICATOR', 'USER']),
    authorities: z.array(z.string()).openapi({ example: ['ROLE_ADMIN', 'ROLE_ADJUDICATOR', 'ROLE_USER'] }),
  })
  .openapi('LoginResponse');

export const TokenRequest = z
  .object({
    grant_type: z.enum(['authorization_code', 'refresh_token', 'client_credentials']),
    code: z.string().optional(),
    redirect_uri: z.string().optional(),
    code_verifier: z.string().optional(),
    refresh_token: z.string().optional(),
    client_id: z.string().optional(),
    client_secret: z.string().optional(),
    scope: z.string().optional(),
  })
  .openapi('TokenRequest');

export const AccessTokenResponse = z
  .object({
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int(),
    refresh_token: z.string().optional(),
    scope: z.string(),
  })
  .openapi('AccessTokenResponse');

export const OAuthError = z
  .object({ error: z.string(), error_description: z.string().optional() })
  .openapi('OAuthError', { description: 'RFC 6749 section 5.2 error' });
