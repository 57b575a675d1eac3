import { sha256 } from '../../auth/password.js';
import type { AuthService } from './auth-service.js';
import type { ServiceContext } from '../context.js';
import { DomainError } from '../errors.js';
import { OAuthError } from './oauth-error.js';
import { clientSecretMatches, findClient, type GrantType, type OAuthClient } from './oauth-clients.js';

/**
 * Client authentication at the token endpoint (RFC 6749 2.3): HTTP Basic or `client_id`/`client_secret`
 * form fields, never both. Failures are throttled like password logins, per (client id, address) and per address.
 */

/** Client credentials as the request carried them. */
export interface PresentedClient {
  clientId: string;
  secret?: string;
  via: 'basic' | 'body';
  /** The Basic credentials before form-decoding, when that changed them (see {@link BasicCredentials}). */
  raw?: { clientId: string; secret: string };
}

/**
 * Credentials from an `Authorization: Basic` header, form-decoded as RFC 6749 2.3.1 requires; `raw` holds
 * them as sent when decoding changed them, because many tools (curl -u) send account passwords unencoded.
 * 'malformed' when the header could not be read.
 */
export type BasicCredentials =
  | { id: string; secret: string; raw?: { id: string; secret: string } }
  | 'malformed'
  | undefined;

/** Work out which client the request claims to be, refusing ambiguous combinations. */
export function presentedClient(params: Record<string, string>, basic: BasicCredentials): PresentedClient | undefined {
  if (basic === 'malformed')
    throw new OAuthError('invalid_client', 'The Basic credentials are malformed', { basicChallenge: true });
  if (basic) {
    if (params.client_secret !== undefined)
      throw new OAuthError(
        'invalid_request',
        'Use one client authentication method: HTTP Basic or client_secret, not both',
      );
    if (params.client_id !== undefined && params.client_id !== basic.id)
      throw new OAuthError('invalid_request', 'client_id differs from the Basic credentials');
    return {
      clientId: basic.id,
      secret: basic.secret,
      via: 'basic',
      ...(basic.raw ? { raw: { clientId: basic.raw.id, secret: basic.raw.secret } } : {}),
    };
  }
  if (params.client_id === undefined) {
    if (params.client_secret !== undefined) throw new OAuthError('invalid_request', 'client_secret without client_id');
    return undefined;
  }
  return { clientId: params.client_id, secret: params.client_secret, via: 'body' };
}

/** An invalid_client error, with the Basic challenge RFC 6749 5.2 requires when Basic was tried. */
export const invalidClient = (presented: PresentedClient | undefined, description: string) =>
  new OAuthError('invalid_client', description, { basicChallenge: presented?.via === 'basic' });

/** Run a throttled check, turning the throttle's 429 into an OAuth error the client can read. */
export async function throttled<T>(presented: PresentedClient, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof DomainError && error.code === 'too-many-requests') {
      const retry = typeof error.extras.retryAfterSeconds === 'number' ? error.extras.retryAfterSeconds : undefined;
      throw new OAuthError('invalid_client', 'Too many failed attempts; try again later', {
        status: 429,
        retryAfterSeconds: retry,
        basicChallenge: presented.via === 'basic',
      });
    }
    if (error instanceof DomainError && error.code === 'unauthorized')
      throw invalidClient(presented, 'Client authentication failed');
    throw error;
  }
}

/**
 * Authenticate a registered client for a grant (null: for no grant, as token revocation asks). Confidential
 * clients must prove their secret; public clients must not send one (it would mean the secret is being shipped
 * in an app, where it cannot stay secret).
 */
export async function authenticateClient(
  ctx: ServiceContext,
  auth: AuthService,
  presented: PresentedClient | undefined,
  grant: GrantType | null,
  address: string,
): Promise<OAuthClient> {
  if (!presented) throw invalidClient(presented, 'Client authentication or client_id is required');
  const client = await findClient(ctx, presented.clientId);
  if (!client) throw invalidClient(presented, 'Client authentication failed');
  if (client.confidential) {
    const secret = presented.secret;
    await throttled(presented, async () => {
      const verdict = await auth.throttle.attempt(
        `client:${client.clientId}`,
        address,
        await sha256(`${client.clientId}\u0000${secret ?? ''}`),
        async () =>
          secret !== undefined && (await clientSecretMatches(client, secret))
            ? { ok: true, value: null }
            : { ok: false, reason: 'bad client secret' },
      );
      if (!verdict.ok) throw new DomainError('unauthorized', verdict.reason);
    });
  } else if (presented.secret !== undefined && presented.secret !== '') {
    throw invalidClient(presented, 'This is a public client; it has no secret to present');
  }
  if (grant !== null && !client.grantTypes.includes(grant))
    throw new OAuthError('unauthorized_client', `This client may not use the ${grant} grant`);
  return client;
}
