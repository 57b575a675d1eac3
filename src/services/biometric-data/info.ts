import {
  findFaceDataOfImage,
  findImageOfOperationId,
  findVoiceData,
  hasImageOfOperation,
  listFaceDataOfOperation,
  listImagesOfOperation,
  listVoiceDataOfOperation,
  type SampleCondition,
} from '../../db/repositories/biometric-data/samples.js';
import { knownOperationUuids, operationRowMeets } from '../../db/repositories/biometric-data/identifiers.js';
import type { ServiceContext } from '../context.js';
import { notFound } from '../errors.js';
import { presentFaceData, presentImage, presentVoiceData } from './present.js';
import { renderPendingTokenImages } from './token-images.js';
import { ownsOperation, ownsSample, type Owner } from '../ownership.js';
import type { ExtractorProvider } from '../biometrics/extractor-provider.js';

/** What reading stored images uses: the database, and the extractor that renders token images not made yet. */
type ImageServices = { ctx: ServiceContext; extractors: ExtractorProvider };

/**
 * The read-by-identifier and read-by-UUID operations of seed sections 4.3 and 4.4. A read by id names one
 * sample and answers 404 when there is none; a read by UUID answers every sample of that operation (an
 * empty list when the operation stored none, e.g. a CHECK) and 404 only when the UUID names nothing at all.
 * With an `owner` (the user surface), only the samples and images that are that account's are shown, and a
 * UUID of another account's operation is a 404 (services/ownership.ts).
 */

/** UUIDs are stored lower-case; clients may send either case. */
const lower = (uuid: string) => uuid.toLowerCase();

/** The owner's samples only (none without an owner: every sample). */
const ownedSamples = (owner: Owner): SampleCondition | undefined =>
  owner ? (alias) => ownsSample(alias, owner) : undefined;

async function assertOperationKnown(ctx: ServiceContext, uuid: string, owner: Owner) {
  const known = owner
    ? await operationRowMeets(ctx.db, uuid, (accountColumn) => ownsOperation(accountColumn, owner))
    : (await knownOperationUuids(ctx.db, [uuid])).has(uuid);
  if (!known) throw notFound(`Operation ${uuid}`);
}

/**
 * Face data by the identifier of the image it was found in (the seed's "by image identifier"); when an image
 * holds several faces, the first one stored.
 */
export async function getFaceDataByImageId(ctx: ServiceContext, imageId: number) {
  const row = await findFaceDataOfImage(ctx.db, imageId);
  if (!row) throw notFound(`Face data of image ${imageId}`);
  return presentFaceData(row);
}

export async function getFaceDataByUuid(ctx: ServiceContext, operationUuid: string, owner: Owner = null) {
  const uuid = lower(operationUuid);
  const rows = await listFaceDataOfOperation(ctx.db, uuid, ownedSamples(owner));
  if (rows.length === 0) await assertOperationKnown(ctx, uuid, owner);
  return rows.map(presentFaceData);
}

export async function getVoiceDataById(ctx: ServiceContext, id: number) {
  const row = await findVoiceData(ctx.db, id);
  if (!row) throw notFound(`Voice data ${id}`);
  return presentVoiceData(row);
}

export async function getVoiceDataByUuid(ctx: ServiceContext, operationUuid: string, owner: Owner = null) {
  const uuid = lower(operationUuid);
  const rows = await listVoiceDataOfOperation(ctx.db, uuid, ownedSamples(owner));
  if (rows.length === 0) await assertOperationKnown(ctx, uuid, owner);
  return rows.map(presentVoiceData);
}

/** One image, only if it belongs to the operation with that (numeric) identifier. */
export async function getImageById(services: ImageServices, imageId: number, operationId: number) {
  const { ctx } = services;
  await renderPendingTokenImages(services, { imageIds: [imageId] });
  const row = await findImageOfOperationId(ctx.db, imageId, operationId);
  if (!row) throw notFound(`Image ${imageId} of operation ${operationId}`);
  return presentImage(row);
}

export async function getImagesByUuid(services: ImageServices, operationUuid: string, owner: Owner = null) {
  const { ctx } = services;
  const uuid = lower(operationUuid);
  const condition = ownedSamples(owner);
  // Token images are rendered (extraction work) only for a caller who may see them.
  if (!condition || (await hasImageOfOperation(ctx.db, uuid, condition)))
    await renderPendingTokenImages(services, { operationUuids: [uuid] });
  const rows = await listImagesOfOperation(ctx.db, uuid, condition);
  if (rows.length === 0) await assertOperationKnown(ctx, uuid, owner);
  return rows.map(presentImage);
}
