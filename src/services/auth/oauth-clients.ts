import {
  deleteOauthClient,
  findOauthClient,
  insertOauthClient,
  listOauthClients,
  upsertOauthClient,
  type OauthClientRow,
} from '../../db/repositories/auth/oauth-clients.js';
import { revokeClientRefreshTokens } from '../../db/repositories/auth/refresh-tokens.js';
import { randomSecret, sha256 } from '../../auth/password.js';
import { safeEqual } from '../../auth/safe-equal.js';
import type { Role } from '../../auth/roles.js';
import type { ServiceContext } from '../context.js';
import { DomainError, conflict, notFound } from '../errors.js';
import { issuerOf } from './auth-service.js';
import { LOOPBACK_PATTERNS, isRegistrableRedirectUri } from './redirect-uris.js';
import { credentialsChanged } from './credential-cache.js';

/**
 * The OAuth client registry (table `oauth_clients`). Confidential clients (service integrations) hold a
 * secret, stored only as its SHA-256: the secret is 256 random bits, so a slow KDF would add nothing but
 * latency. Public clients (the docs page, the CLI) hold none and may only use authorization_code with PKCE.
 */

export type GrantType = 'authorization_code' | 'refresh_token' | 'client_credentials';

export interface OAuthClient {
  clientId: string;
  name: string;
  confidential: boolean;
  redirectUris: string[];
  grantTypes: GrantType[];
  /** The most a token issued to or through this client may carry. */
  role: Role;
  createdAt: string;
  builtin: boolean;
}

/** Clients the service seeds itself and owns: re-created on start, not removable. */
const BUILTIN_CLIENT_IDS = ['bims-docs', 'bims-cli'] as const;

function present(row: OauthClientRow): OAuthClient {
  return {
    clientId: row.client_id,
    name: row.name,
    confidential: row.secret_hash !== null,
    redirectUris: row.redirect_uris,
    grantTypes: row.grant_types as GrantType[],
    role: row.role,
    createdAt: row.created_at.toISOString(),
    builtin: (BUILTIN_CLIENT_IDS as readonly string[]).includes(row.client_id),
  };
}

/** A client with the hash of its secret, for authentication only; never handed to HTTP responses. */
export async function findClient(
  ctx: ServiceContext,
  clientId: string,
): Promise<(OAuthClient & { secretHash: string | null }) | undefined> {
  if (clientId.length === 0 || clientId.length > 200) return undefined;
  const row = await findOauthClient(ctx.db, clientId);
  return row ? { ...present(row), secretHash: row.secret_hash } : undefined;
}

/** True when `secret` is the client's secret. */
export async function clientSecretMatches(client: { secretHash: string | null }, secret: string): Promise<boolean> {
  if (client.secretHash === null) return false;
  return safeEqual(await sha256(secret), client.secretHash);
}

/**
 * Register a confidential client. The secret is returned here once and never again (only its hash is kept).
 * Without redirect URIs the client may only use client_credentials; with them it may also run the
 * authorization_code flow on behalf of users.
 *
 * @example const { client, clientSecret } = await registerClient(ctx, { name: 'payroll', role: 'USER' });
 */
export async function registerClient(
  ctx: ServiceContext,
  input: { name: string; role: Role; redirectUris?: string[] },
): Promise<{ client: OAuthClient; clientSecret: string }> {
  const name = input.name.trim();
  if (!name || name.length > 200) throw new DomainError('validation', 'name: must be 1 to 200 characters');
  const redirectUris = [...new Set(input.redirectUris ?? [])];
  for (const uri of redirectUris) {
    if (!isRegistrableRedirectUri(uri))
      throw new DomainError('validation', `redirect URI '${uri}' must be an absolute http(s) URL without fragment`);
  }
  const grantTypes: GrantType[] = redirectUris.length
    ? ['client_credentials', 'authorization_code', 'refresh_token']
    : ['client_credentials'];
  const clientSecret = randomSecret(32);
  const row = await insertOauthClient(ctx.db, {
    // A prefix that no built-in client uses, so a registered id can never collide with one.
    client_id: `svc-${randomSecret(12)}`,
    name,
    secret_hash: await sha256(clientSecret),
    redirect_uris: redirectUris,
    grant_types: grantTypes,
    role: input.role,
    created_at: ctx.now(),
  });
  ctx.log.info('oauth client registered', { clientId: row.client_id, role: row.role });
  return { client: present(row), clientSecret };
}

/** Every registered client, oldest first. */
export async function listClients(ctx: ServiceContext): Promise<OAuthClient[]> {
  return (await listOauthClients(ctx.db)).map(present);
}

/**
 * Remove a client with its pending codes, and revoke its refresh tokens, so nothing issued through it can
 * be redeemed any more. Its access tokens stop working at their next use: the Bearer check looks the client
 * up, and for tokens acting for an account, finds their login (refresh-token family) revoked. The revoked
 * rows are purged once expired. Built-in clients are refused: start-up would only re-create them.
 */
export async function removeClient(ctx: ServiceContext, clientId: string): Promise<void> {
  if ((BUILTIN_CLIENT_IDS as readonly string[]).includes(clientId))
    throw conflict(`'${clientId}' is a built-in client and cannot be removed`);
  await ctx.db.transaction().execute(async (trx) => {
    await revokeClientRefreshTokens(trx, clientId, ctx.now());
    if (!(await deleteOauthClient(trx, clientId))) throw notFound(`OAuth client '${clientId}'`);
  });
  credentialsChanged();
  ctx.log.info('oauth client removed', { clientId });
}

/** Loopback spellings of a base URL, so the docs page works whether opened as 127.0.0.1 or localhost. */
function loopbackAliases(base: string): string[] {
  const url = new URL(base);
  const loopback = ['127.0.0.1', 'localhost', '[::1]'];
  if (!loopback.includes(url.hostname)) return [base];
  return loopback.map(
    (host) => `${url.protocol}//${host}${url.port ? `:${url.port}` : ''}${url.pathname.replace(/\/$/, '')}`,
  );
}

/**
 * Seed the built-in public clients (start-up calls this right after creating the first admin); idempotent, safe to run on every start and on several nodes at once.
 * Their definition is refreshed on each start because it derives from configuration (the base URL) that
 * may have changed since the row was written:
 * - `bims-docs`: the Swagger UI on `/docs` (authorization_code + PKCE, redirect to its oauth2-redirect.html);
 * - `bims-cli`: native command-line tools (RFC 8252), redirected to a loopback listener on any port.
 */
export async function ensureBuiltinClients(ctx: ServiceContext, baseUrl: string = issuerOf(ctx.config)): Promise<void> {
  const grants: GrantType[] = ['authorization_code', 'refresh_token'];
  const builtins = [
    {
      client_id: 'bims-docs',
      name: 'BIMS API documentation',
      redirect: loopbackAliases(baseUrl).map((b) => `${b}/docs/assets/oauth2-redirect.html`),
    },
    { client_id: 'bims-cli', name: 'BIMS command-line tools', redirect: [...LOOPBACK_PATTERNS] },
  ];
  for (const b of builtins) {
    await upsertOauthClient(ctx.db, {
      client_id: b.client_id,
      name: b.name,
      secret_hash: null,
      redirect_uris: b.redirect,
      grant_types: grants,
      role: 'ADMIN',
      created_at: ctx.now(),
    });
  }
}
