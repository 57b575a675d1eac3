import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';

/**
 * Select builders over the sample tables that name every column they read: template columns and sample
 * bytes are never selected here (bytes are read only by the ZIP writer, one batch at a time). Each joins
 * `subjects` for the client's subjectId, which the models show instead of the internal subject_ref.
 */

type Db = Kysely<Database>;

/**
 * Image metadata with its byte size, computed by the database so the bytes stay where they are. Callers
 * render the token images of what they show first (token-images.ts); a token image that could not be made
 * has no bytes and no size, and is left out rather than shown empty.
 */
export function imageInfo(db: Db) {
  return db
    .selectFrom('images as i')
    .leftJoin('subjects as s', 's.id', 'i.subject_ref')
    .select([
      'i.id', 'i.operation_uuid', 'i.subject_ref', 's.subject_id', 'i.kind', 'i.format', 'i.width', 'i.height', 'i.created_at',
      sql<number>`octet_length(i.bytes)`.as('size'),
    ])
    .where('i.bytes', 'is not', null);
}

/** Face data without the template. */
export function faceData(db: Db) {
  return db
    .selectFrom('face_samples as f')
    .leftJoin('subjects as s', 's.id', 'f.subject_ref')
    .select([
      'f.id', 'f.operation_uuid', 's.subject_id', 'f.image_id', 'f.rectangle', 'f.yaw', 'f.pitch', 'f.roll', 'f.quality',
      'f.liveness_score', 'f.template_version', 'f.created_at',
    ]);
}

/** Voice data without the template or the audio, with the audio's byte size. */
export function voiceData(db: Db) {
  return db
    .selectFrom('voice_samples as v')
    .leftJoin('subjects as s', 's.id', 'v.subject_ref')
    .select([
      'v.id', 'v.operation_uuid', 'v.subject_ref', 's.subject_id', 'v.duration_ms', 'v.sample_rate', 'v.quality', 'v.speech_ratio',
      'v.template_version', 'v.created_at',
      sql<number>`octet_length(v.audio)`.as('size'),
    ]);
}

/**
 * Whether an operation UUID names anything: an operation row, or samples it stored (the operation row may
 * have been deleted from the log while its samples stay with their subject).
 */
export async function knownOperationUuids(db: Db, uuids: readonly string[]): Promise<Set<string>> {
  const known = new Set<string>();
  if (uuids.length === 0) return known;
  const ops = await db.selectFrom('operations').select('uuid').where('uuid', 'in', [...uuids]).execute();
  for (const row of ops) known.add(row.uuid);
  const rest = uuids.filter((u) => !known.has(u));
  if (rest.length > 0) {
    const samples = await db
      .selectFrom('images').select('operation_uuid').where('operation_uuid', 'in', rest)
      .union(db.selectFrom('voice_samples').select('operation_uuid').where('operation_uuid', 'in', rest))
      .union(db.selectFrom('face_samples').select('operation_uuid').where('operation_uuid', 'in', rest))
      .execute();
    for (const row of samples) known.add(row.operation_uuid);
  }
  return known;
}
