import type { ServiceContext } from '../context.js';
import { notFound } from '../errors.js';
import type { Services } from '../index.js';
import { presentFaceData, presentImage, presentVoiceData } from './present.js';
import { faceData, imageInfo, knownOperationUuids, voiceData } from './queries.js';
import { renderPendingTokenImages } from './token-images.js';

/**
 * The read-by-identifier and read-by-UUID operations of seed sections 4.3 and 4.4. A read by id names one
 * sample and answers 404 when there is none; a read by UUID answers every sample of that operation (an
 * empty list when the operation stored none, e.g. a CHECK) and 404 only when the UUID names nothing at all.
 */

/** UUIDs are stored lower-case; clients may send either case. */
const lower = (uuid: string) => uuid.toLowerCase();

async function assertOperationKnown(ctx: ServiceContext, uuid: string) {
  if (!(await knownOperationUuids(ctx.db, [uuid])).has(uuid)) throw notFound(`Operation ${uuid}`);
}

/**
 * Face data by the identifier of the image it was found in (the seed's "by image identifier"); when an image
 * holds several faces, the first one stored.
 */
export async function getFaceDataByImageId(ctx: ServiceContext, imageId: number) {
  const row = await faceData(ctx.db).where('f.image_id', '=', imageId).orderBy('f.id').limit(1).executeTakeFirst();
  if (!row) throw notFound(`Face data of image ${imageId}`);
  return presentFaceData(row);
}

export async function getFaceDataByUuid(ctx: ServiceContext, operationUuid: string) {
  const uuid = lower(operationUuid);
  const rows = await faceData(ctx.db).where('f.operation_uuid', '=', uuid).orderBy('f.image_id').orderBy('f.id').execute();
  if (rows.length === 0) await assertOperationKnown(ctx, uuid);
  return rows.map(presentFaceData);
}

export async function getVoiceDataById(ctx: ServiceContext, id: number) {
  const row = await voiceData(ctx.db).where('v.id', '=', id).executeTakeFirst();
  if (!row) throw notFound(`Voice data ${id}`);
  return presentVoiceData(row);
}

export async function getVoiceDataByUuid(ctx: ServiceContext, operationUuid: string) {
  const uuid = lower(operationUuid);
  const rows = await voiceData(ctx.db).where('v.operation_uuid', '=', uuid).orderBy('v.id').execute();
  if (rows.length === 0) await assertOperationKnown(ctx, uuid);
  return rows.map(presentVoiceData);
}

/** One image, only if it belongs to the operation with that (numeric) identifier. */
export async function getImageById(services: Services, imageId: number, operationId: number) {
  const { ctx } = services;
  await renderPendingTokenImages(services, { imageIds: [imageId] });
  const row = await imageInfo(ctx.db)
    .innerJoin('operations as o', 'o.uuid', 'i.operation_uuid')
    .where('i.id', '=', imageId)
    .where('o.id', '=', operationId)
    .executeTakeFirst();
  if (!row) throw notFound(`Image ${imageId} of operation ${operationId}`);
  return presentImage(row);
}

export async function getImagesByUuid(services: Services, operationUuid: string) {
  const { ctx } = services;
  const uuid = lower(operationUuid);
  await renderPendingTokenImages(services, { operationUuids: [uuid] });
  const rows = await imageInfo(ctx.db).where('i.operation_uuid', '=', uuid).orderBy('i.id').execute();
  if (rows.length === 0) await assertOperationKnown(ctx, uuid);
  return rows.map(presentImage);
}
