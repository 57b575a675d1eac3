import type { Selectable } from 'kysely';
import { json } from '../../json.js';
import type { Database } from '../../tables.js';
import { asDate, parsedJson } from '../decode.js';
import type { Queryable } from '../queryable.js';

/** The JWT signing keys every node shares (table `signing_keys`), their JWKs decoded. */

type SigningKeyRow = Selectable<Database['signing_keys']>;

/** Every key, oldest first. */
export async function listSigningKeys(db: Queryable): Promise<SigningKeyRow[]> {
  const rows = await db.selectFrom('signing_keys').selectAll().orderBy('created_at', 'asc').execute();
  return rows.map((row) => ({
    ...row,
    private_jwk: parsedJson(row.private_jwk),
    public_jwk: parsedJson(row.public_jwk),
    created_at: asDate(row.created_at),
    retired_at: row.retired_at === null ? null : asDate(row.retired_at),
  }));
}

export async function insertSigningKey(
  db: Queryable,
  key: { kid: string; alg: string; private_jwk: object; public_jwk: object; created_at: Date },
): Promise<void> {
  await db
    .insertInto('signing_keys')
    .values({ ...key, private_jwk: json(key.private_jwk), public_jwk: json(key.public_jwk) })
    .execute();
}

export async function retireSigningKey(db: Queryable, kid: string, at: Date): Promise<void> {
  await db.updateTable('signing_keys').set({ retired_at: at }).where('kid', '=', kid).execute();
}
