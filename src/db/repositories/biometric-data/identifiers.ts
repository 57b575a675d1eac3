import type { Expression, SqlBool } from 'kysely';
import type { Queryable } from '../queryable.js';

/**
 * What the identifiers of the biometric-data reads and downloads name: operations by numeric id or UUID,
 * subjects by the client's subjectId or internal id. Answers what exists; the services decide what a missing
 * one means (a 404 naming it).
 */

/**
 * Which of these operation UUIDs name anything: an operation row, or samples it stored (the operation row may
 * have been deleted from the log while its samples stay with their subject).
 */
export async function knownOperationUuids(db: Queryable, uuids: readonly string[]): Promise<Set<string>> {
  const known = new Set<string>();
  if (uuids.length === 0) return known;
  const ops = await db
    .selectFrom('operations')
    .select('uuid')
    .where('uuid', 'in', [...uuids])
    .execute();
  for (const row of ops) known.add(row.uuid);
  const rest = uuids.filter((u) => !known.has(u));
  if (rest.length > 0) {
    const samples = await db
      .selectFrom('images')
      .select('operation_uuid')
      .where('operation_uuid', 'in', rest)
      .union(db.selectFrom('voice_samples').select('operation_uuid').where('operation_uuid', 'in', rest))
      .union(db.selectFrom('face_samples').select('operation_uuid').where('operation_uuid', 'in', rest))
      .execute();
    for (const row of samples) known.add(row.operation_uuid);
  }
  return known;
}

/**
 * Whether an operation row with this UUID exists and meets `condition`, given the column of its account
 * (services/ownership.ts `ownsOperation` says whose it is).
 */
export async function operationRowMeets(
  db: Queryable,
  uuid: string,
  condition: (accountColumn: 'operations.account_id') => Expression<SqlBool>,
): Promise<boolean> {
  const row = await db
    .selectFrom('operations')
    .select('uuid')
    .where('uuid', '=', uuid)
    .where(condition('operations.account_id'))
    .executeTakeFirst();
  return row !== undefined;
}

/** The operations with these numeric ids that exist: id and UUID. */
export function findOperationUuidsByIds(
  db: Queryable,
  ids: readonly number[],
): Promise<{ id: number; uuid: string }[]> {
  return db
    .selectFrom('operations')
    .select(['id', 'uuid'])
    .where('id', 'in', [...ids])
    .execute();
}

/** The subjects with these subjectIds that exist: internal id and subjectId. */
export function findSubjectRefsBySubjectIds(
  db: Queryable,
  subjectIds: readonly string[],
): Promise<{ id: number; subject_id: string }[]> {
  return db
    .selectFrom('subjects')
    .select(['id', 'subject_id'])
    .where('subject_id', 'in', [...subjectIds])
    .execute();
}

/** Which of these internal subject ids exist. */
export async function existingSubjectRefs(db: Queryable, refs: readonly number[]): Promise<Set<number>> {
  const rows = await db
    .selectFrom('subjects')
    .select('id')
    .where('id', 'in', [...refs])
    .execute();
  return new Set(rows.map((r) => r.id));
}
