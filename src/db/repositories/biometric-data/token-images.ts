import { parsedJson } from '../decode.js';
import type { Queryable } from '../queryable.js';

/**
 * The SQL of token images made when first read (services/biometric-data/token-images.ts says why): which are
 * still to be made, what each is made from, and storing one.
 */

/** Which images a read is about to show: any image of these ids, operations or subjects. */
export interface ImageScope {
  imageIds?: readonly number[];
  operationUuids?: readonly string[];
  subjectRefs?: readonly number[];
}

/** The ids of the token images of `scope` not made yet (no bytes), in id order. */
export async function listPendingTokenImageIds(db: Queryable, scope: ImageScope): Promise<number[]> {
  const { imageIds = [], operationUuids = [], subjectRefs = [] } = scope;
  if (imageIds.length === 0 && operationUuids.length === 0 && subjectRefs.length === 0) return [];
  const rows = await db
    .selectFrom('images')
    .select('id')
    .where('bytes', 'is', null)
    .where((eb) =>
      eb.or([
        ...(imageIds.length ? [eb('id', 'in', [...imageIds])] : []),
        ...(operationUuids.length ? [eb('operation_uuid', 'in', [...operationUuids])] : []),
        ...(subjectRefs.length ? [eb('subject_ref', 'in', [...subjectRefs])] : []),
      ]),
    )
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}

/** What a token image is made from: the bytes of its ORIGINAL image and the landmarks of that image's first face. */
interface TokenImageSource {
  id: number;
  original: Uint8Array | null;
  /** As stored (jsonb, decoded): the caller checks its shape. */
  landmarks: unknown;
}

/** The sources of these token images, those still not made (another reader may have made some meanwhile). */
export async function listTokenImageSources(db: Queryable, ids: readonly number[]): Promise<TokenImageSource[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('images as t')
    .innerJoin('images as o', 'o.id', 't.source_image_id')
    .select((eb) => [
      't.id',
      'o.bytes as original',
      eb
        .selectFrom('face_samples as f')
        .select('f.landmarks')
        .whereRef('f.image_id', '=', 't.source_image_id')
        .orderBy('f.id')
        .limit(1)
        .as('landmarks'),
    ])
    .where('t.id', 'in', [...ids])
    .where('t.bytes', 'is', null)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    original: r.original,
    landmarks: r.landmarks === null ? null : parsedJson<unknown>(r.landmarks),
  }));
}

/** Store a token image's bytes unless another reader stored them first (then nothing changes). */
export async function storeTokenImage(db: Queryable, id: number, png: Uint8Array): Promise<void> {
  await db.updateTable('images').set({ bytes: png }).where('id', '=', id).where('bytes', 'is', null).execute();
}
