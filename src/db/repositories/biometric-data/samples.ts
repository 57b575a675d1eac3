import { sql, type Expression, type Selectable, type SqlBool } from 'kysely';
import type { Database } from '../../tables.js';
import { asDate, parsedJson } from '../decode.js';
import type { Queryable } from '../queryable.js';

/**
 * Reads of the sample tables (images, face_samples, voice_samples) as the `Image`, `BiometricFaceData` and
 * `BiometricVoiceData` models need them. Every select names its columns: template columns and sample bytes are
 * never read here, except by {@link loadImageBytes} and {@link loadVoiceAudio}, which the ZIP writer calls one
 * batch at a time. Each joins `subjects` for the client's subjectId, which the models show instead of the
 * internal subject_ref.
 */

/**
 * An extra condition on a sample row, given the alias its table has in the query (`i`, `f` or `v`): how a
 * service limits a read to what a caller owns (services/ownership.ts `ownsSample`) without this file knowing
 * the rule.
 */
export type SampleCondition = (alias: 'i' | 'f' | 'v') => Expression<SqlBool>;

/** An image row without its bytes, with their size and the client's subjectId. */
export type ImageInfoRow = Pick<
  Selectable<Database['images']>,
  'id' | 'operation_uuid' | 'subject_ref' | 'kind' | 'format' | 'width' | 'height' | 'created_at'
> & { subject_id: string | null; size: number };

/** A face sample without its template or landmarks, with the client's subjectId. */
export type FaceDataRow = Pick<
  Selectable<Database['face_samples']>,
  | 'id'
  | 'operation_uuid'
  | 'image_id'
  | 'rectangle'
  | 'yaw'
  | 'pitch'
  | 'roll'
  | 'quality'
  | 'liveness_score'
  | 'template_version'
  | 'created_at'
> & { subject_id: string | null };

/** A voice sample without its template or audio, with the audio's size and the client's subjectId. */
export type VoiceDataRow = Pick<
  Selectable<Database['voice_samples']>,
  | 'id'
  | 'operation_uuid'
  | 'subject_ref'
  | 'duration_ms'
  | 'sample_rate'
  | 'quality'
  | 'speech_ratio'
  | 'template_version'
  | 'created_at'
> & { subject_id: string | null; size: number };

/** Samples stored by these operations or belonging to these subjects (either list may be empty, not both). */
interface SampleScope {
  operationUuids: readonly string[];
  subjectRefs: readonly number[];
}

/**
 * Image metadata with its byte size, computed by the database so the bytes stay where they are. A token image
 * not made yet (token-images.ts renders it when first read) has no bytes and no size, and is left out rather
 * than shown empty.
 */
function imageInfo(db: Queryable) {
  return db
    .selectFrom('images as i')
    .leftJoin('subjects as s', 's.id', 'i.subject_ref')
    .select([
      'i.id',
      'i.operation_uuid',
      'i.subject_ref',
      's.subject_id',
      'i.kind',
      'i.format',
      'i.width',
      'i.height',
      'i.created_at',
      sql<number>`octet_length(i.bytes)`.as('size'),
    ])
    .where('i.bytes', 'is not', null);
}

function faceData(db: Queryable) {
  return db
    .selectFrom('face_samples as f')
    .leftJoin('subjects as s', 's.id', 'f.subject_ref')
    .select([
      'f.id',
      'f.operation_uuid',
      's.subject_id',
      'f.image_id',
      'f.rectangle',
      'f.yaw',
      'f.pitch',
      'f.roll',
      'f.quality',
      'f.liveness_score',
      'f.template_version',
      'f.created_at',
    ]);
}

function voiceData(db: Queryable) {
  return db
    .selectFrom('voice_samples as v')
    .leftJoin('subjects as s', 's.id', 'v.subject_ref')
    .select([
      'v.id',
      'v.operation_uuid',
      'v.subject_ref',
      's.subject_id',
      'v.duration_ms',
      'v.sample_rate',
      'v.quality',
      'v.speech_ratio',
      'v.template_version',
      'v.created_at',
      sql<number>`octet_length(v.audio)`.as('size'),
    ]);
}

const decodeImage = (row: ImageInfoRow): ImageInfoRow => ({
  ...row,
  size: Number(row.size),
  created_at: asDate(row.created_at),
});
const decodeFace = (row: FaceDataRow): FaceDataRow => ({
  ...row,
  rectangle: parsedJson(row.rectangle),
  created_at: asDate(row.created_at),
});
const decodeVoice = (row: VoiceDataRow): VoiceDataRow => ({
  ...row,
  size: Number(row.size),
  created_at: asDate(row.created_at),
});

/** The shown images of one operation, by id; `condition` narrows them (ownership). */
export async function listImagesOfOperation(
  db: Queryable,
  operationUuid: string,
  condition?: SampleCondition,
): Promise<ImageInfoRow[]> {
  const query = imageInfo(db).where('i.operation_uuid', '=', operationUuid);
  return (await (condition ? query.where(condition('i')) : query).orderBy('i.id').execute()).map(decodeImage);
}

/** Whether one operation has any shown image that meets `condition`. */
export async function hasImageOfOperation(
  db: Queryable,
  operationUuid: string,
  condition: SampleCondition,
): Promise<boolean> {
  const row = await imageInfo(db)
    .where('i.operation_uuid', '=', operationUuid)
    .where(condition('i'))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** One shown image, only if it belongs to the operation with that numeric id. */
export async function findImageOfOperationId(
  db: Queryable,
  imageId: number,
  operationId: number,
): Promise<ImageInfoRow | undefined> {
  const row = await imageInfo(db)
    .innerJoin('operations as o', 'o.uuid', 'i.operation_uuid')
    .where('i.id', '=', imageId)
    .where('o.id', '=', operationId)
    .executeTakeFirst();
  return row && decodeImage(row);
}

/** The shown images of a subject, by id. */
export async function listImagesOfSubject(db: Queryable, subjectRef: number): Promise<ImageInfoRow[]> {
  return (await imageInfo(db).where('i.subject_ref', '=', subjectRef).orderBy('i.id').execute()).map(decodeImage);
}

/** The shown images stored by these operations or belonging to these subjects, by id. */
export async function listImagesInScope(db: Queryable, scope: SampleScope): Promise<ImageInfoRow[]> {
  const { operationUuids: uuids, subjectRefs: refs } = scope;
  const rows = await imageInfo(db)
    .where((eb) =>
      eb.or([
        ...(uuids.length ? [eb('i.operation_uuid', 'in', [...uuids])] : []),
        ...(refs.length ? [eb('i.subject_ref', 'in', [...refs])] : []),
      ]),
    )
    .orderBy('i.id')
    .execute();
  return rows.map(decodeImage);
}

/** The first face sample found in an image (an image may hold several faces). */
export async function findFaceDataOfImage(db: Queryable, imageId: number): Promise<FaceDataRow | undefined> {
  const row = await faceData(db).where('f.image_id', '=', imageId).orderBy('f.id').limit(1).executeTakeFirst();
  return row && decodeFace(row);
}

/** The face samples of one operation, by image then id; `condition` narrows them (ownership). */
export async function listFaceDataOfOperation(
  db: Queryable,
  operationUuid: string,
  condition?: SampleCondition,
): Promise<FaceDataRow[]> {
  const query = faceData(db).where('f.operation_uuid', '=', operationUuid);
  return (await (condition ? query.where(condition('f')) : query).orderBy('f.image_id').orderBy('f.id').execute()).map(
    decodeFace,
  );
}

/** The face samples of a subject, by id. */
export async function listFaceDataOfSubject(db: Queryable, subjectRef: number): Promise<FaceDataRow[]> {
  return (await faceData(db).where('f.subject_ref', '=', subjectRef).orderBy('f.id').execute()).map(decodeFace);
}

export async function findVoiceData(db: Queryable, id: number): Promise<VoiceDataRow | undefined> {
  const row = await voiceData(db).where('v.id', '=', id).executeTakeFirst();
  return row && decodeVoice(row);
}

/** The voice samples of one operation, by id; `condition` narrows them (ownership). */
export async function listVoiceDataOfOperation(
  db: Queryable,
  operationUuid: string,
  condition?: SampleCondition,
): Promise<VoiceDataRow[]> {
  const query = voiceData(db).where('v.operation_uuid', '=', operationUuid);
  return (await (condition ? query.where(condition('v')) : query).orderBy('v.id').execute()).map(decodeVoice);
}

/** The voice samples of a subject, by id. */
export async function listVoiceDataOfSubject(db: Queryable, subjectRef: number): Promise<VoiceDataRow[]> {
  return (await voiceData(db).where('v.subject_ref', '=', subjectRef).orderBy('v.id').execute()).map(decodeVoice);
}

/** The voice samples stored by these operations or belonging to these subjects, by id. */
export async function listVoiceDataInScope(db: Queryable, scope: SampleScope): Promise<VoiceDataRow[]> {
  const { operationUuids: uuids, subjectRefs: refs } = scope;
  const rows = await voiceData(db)
    .where((eb) =>
      eb.or([
        ...(uuids.length ? [eb('v.operation_uuid', 'in', [...uuids])] : []),
        ...(refs.length ? [eb('v.subject_ref', 'in', [...refs])] : []),
      ]),
    )
    .orderBy('v.id')
    .execute();
  return rows.map(decodeVoice);
}

/** The bytes of these images, by id; an image without bytes (a token not made yet) or gone is absent. */
export async function loadImageBytes(db: Queryable, ids: readonly number[]): Promise<Map<number, Uint8Array>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('images')
    .select(['id', 'bytes'])
    .where('id', 'in', [...ids])
    .execute();
  return new Map(rows.flatMap((r) => (r.bytes ? [[r.id, r.bytes] as const] : [])));
}

/** The audio of these voice samples, by id; a sample gone is absent. */
export async function loadVoiceAudio(db: Queryable, ids: readonly number[]): Promise<Map<number, Uint8Array>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('voice_samples')
    .select(['id', 'audio'])
    .where('id', 'in', [...ids])
    .execute();
  return new Map(rows.map((r) => [r.id, r.audio] as const));
}
