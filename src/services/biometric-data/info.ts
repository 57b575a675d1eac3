import type { ServiceContext } from '../context.js';
import { notFound } from '../errors.js';
import type { Services } from '../index.js';
import { presentFaceData, presentImage, presentVoiceData } from './present.js';
import { faceData, imageInfo, knownOperationUuids, voiceData } from './queries.js';
import { renderPendingTokenImages } from './token-images.js';
import { ownsOperation, ownsSample, type Owner } from '../ownership.js';

/**
 * The read-by-identifier and read-by-UUID operations of seed sections 4.3 and 4.4. A read by id names one
 * sample and answers 404 when there is none; a read by UUID answers every sample of that operation (an
 * empty list when the operation stored none, e.g. a CHECK) and 404 only when the UUID names nothing at all.
 * With an `owner` (the user surface), only the samples and images that are that account's are shown, and a
 * UUID of another account's operation is a 404 (services/ownership.ts).
 */

/** UUIDs are stored lower-case; clients may send either case. */
const lower = (uuid: string) => uuid.toLowerCase();

async function assertOperationKnown(ctx: ServiceContext, uuid: string, owner: Owner) {
  const known = owner
    ? await ctx.db.selectFrom('operations').select('uuid').where('uuid', '=', uuid).where(ownsOperation('operations.account_id', owner)).executeTakeFirst()
    : (await knownOperationUuids(ctx.db, [uuid])).has(uuid);
  if (!known) throw notFound(`Operation ${uuid}`);
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

export async function getFaceDataByUuid(ctx: ServiceContext, operationUuid: string, owner: Owner = null) {
  const uuid = lower(operationUuid);
  const query = faceData(ctx.db).where('f.operation_uuid', '=', uuid);
  const rows = await (owner ? query.where(ownsSample('f', owner)) : query).orderBy('f.image_id').orderBy('f.id').execute();
  if (rows.length === 0) await assertOperationKnown(ctx, uuid, owner);
  return rows.map(presentFaceData);
}

export async function getVoiceDataById(ctx: ServiceContext, id: number) {
  const row = await voiceData(ctx.db).where('v.id', '=', id).executeTakeFirst();
  if (!row) throw notFound(`Voice data ${id}`);
  return presentVoiceData(row);
}

export async function getVoiceDataByUuid(ctx: ServiceContext, operationUuid: string, owner: Owner = null) {
  const uuid = lower(operationUuid);
  const query = voiceData(ctx.db).where('v.operation_uuid', '=', uuid);
  const rows = await (owner ? query.where(ownsSample('v', owner)) : query).orderBy('v.id').execute();
  if (rows.length === 0) await assertOperationKnown(ctx, uuid, owner);
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

export async function getImagesByUuid(services: Services, operationUuid: string, owner: Owner = null) {
  const { ctx } = services;
  const uuid = lower(operationUuid);
  const query = imageInfo(ctx.db).where('i.operation_uuid', '=', uuid);
  const owned = owner ? query.where(ownsSample('i', owner)) : query;
  // Token images are rendered (extraction work) only for a caller who may see them.
  if (!owner || (await owned.select('i.id').executeTakeFirst())) await renderPendingTokenImages(services, { operationUuids: [uuid] });
  const rows = await owned.orderBy('i.id').execute();
  if (rows.length === 0) await assertOperationKnown(ctx, uuid, owner);
  return rows.map(presentImage);
}
