import type { Insertable, Selectable } from 'kysely';
import { json } from '../../json.js';
import { PreparedQuery } from '../../prepared.js';
import type { Database } from '../../tables.js';
import { asDate, parsedJson } from '../decode.js';
import type { Queryable } from '../queryable.js';

/** The OAuth client registry (table `oauth_clients`): rows with their jsonb lists decoded. */

export type OauthClientRow = Selectable<Database['oauth_clients']>;

/** A row to insert, its jsonb lists given as arrays (encoded here, the one form both drivers agree on). */
type NewOauthClient = Omit<Insertable<Database['oauth_clients']>, 'redirect_uris' | 'grant_types'> & {
  redirect_uris: string[];
  grant_types: string[];
};

function decoded(row: OauthClientRow): OauthClientRow {
  return {
    ...row,
    redirect_uris: parsedJson(row.redirect_uris),
    grant_types: parsedJson(row.grant_types),
    created_at: asDate(row.created_at),
  };
}

function encoded(client: NewOauthClient): Insertable<Database['oauth_clients']> {
  return { ...client, redirect_uris: json(client.redirect_uris), grant_types: json(client.grant_types) };
}

export async function findOauthClient(db: Queryable, clientId: string): Promise<OauthClientRow | undefined> {
  const row = await db.selectFrom('oauth_clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
  return row && decoded(row);
}

/** Every client, oldest first (ties by id, so the order is stable). */
export async function listOauthClients(db: Queryable): Promise<OauthClientRow[]> {
  const rows = await db
    .selectFrom('oauth_clients')
    .selectAll()
    .orderBy('created_at', 'asc')
    .orderBy('client_id', 'asc')
    .execute();
  return rows.map(decoded);
}

export async function insertOauthClient(db: Queryable, client: NewOauthClient): Promise<OauthClientRow> {
  return decoded(await db.insertInto('oauth_clients').values(encoded(client)).returningAll().executeTakeFirstOrThrow());
}

/**
 * Write a client the service owns: inserted, or its definition (everything but its creation time) replaced.
 * One statement, so nodes starting together do not collide.
 */
export async function upsertOauthClient(db: Queryable, client: NewOauthClient): Promise<void> {
  const { client_id, created_at, ...definition } = encoded(client);
  await db
    .insertInto('oauth_clients')
    .values({ client_id, ...definition, created_at })
    .onConflict((oc) => oc.column('client_id').doUpdateSet(definition))
    .execute();
}

/** Delete a client; false when there was none. */
export async function deleteOauthClient(db: Queryable, clientId: string): Promise<boolean> {
  const gone = await db.deleteFrom('oauth_clients').where('client_id', '=', clientId).executeTakeFirst();
  return Number(gone.numDeletedRows) > 0;
}

/** What the Bearer check of a client token reads: the client's id and role ceiling, and whether the token is revoked. */
type TokenClientRow = Pick<OauthClientRow, 'client_id' | 'role'> & { revoked: boolean };

/** The Bearer check of a client token runs this on every request it does not answer from its cache: prepared. */
const TOKEN_CLIENT = new PreparedQuery<TokenClientRow>(
  'token_client',
  `select client_id, role, exists (select 1 from revoked_access_tokens where jti = $2) as revoked
   from oauth_clients where client_id = $1`,
);

/** What the Bearer check of a client token (whose `jti` is given) needs: its client, and whether it is revoked. */
export async function findTokenClient(
  db: Queryable,
  clientId: string,
  jti: string | null,
): Promise<TokenClientRow | undefined> {
  return (await TOKEN_CLIENT.execute(db, [clientId, jti]))[0];
}
