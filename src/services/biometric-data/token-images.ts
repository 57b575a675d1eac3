import { recordException } from '../exceptions/record.js';
import type { Services } from '../index.js';
import { extractionError, isExtractorUnavailable } from '../biometrics/face-samples.js';

/**
 * Token images are made when first read, not at enrolment.
 *
 * Cutting and compressing the ISO token image was a sixth of the extraction work of every enrolled face
 * (about 25 ms of CPU) and 127 KB stored per face, for an image most deployments never look at. Enrolment
 * now stores a TOKEN row with its size and format, no bytes, and the ORIGINAL image it comes from; the reads
 * that show images (image info, downloads, an adjudication case) call {@link renderPendingTokenImages} first,
 * which renders the missing ones in the extraction pool from the original and the landmarks of its face
 * sample, byte for byte the image enrolment used to make, and stores them. Two readers racing both render
 * the same bytes; the first write wins and the second changes nothing.
 */

/** Which images a read is about to show: any image of these ids, operations or subjects. */
export interface ImageScope {
  imageIds?: readonly number[];
  operationUuids?: readonly string[];
  subjectRefs?: readonly number[];
}

/** Token images rendered at a time: each holds its original photo in memory while it is made. */
const BATCH = 8;

type Landmarks = [number, number][];

function landmarksOf(value: unknown): Landmarks | undefined {
  const parsed = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  return Array.isArray(parsed) && parsed.length >= 68 ? (parsed as Landmarks) : undefined;
}

/**
 * Render and store the token images of `scope` that have not been made yet; answers how many it stored. A
 * busy or unavailable extraction pool answers 503 (the read can be retried); a token that cannot be made from
 * what is stored goes to the exception log and stays pending, and the read goes on without it.
 */
export async function renderPendingTokenImages(services: Services, scope: ImageScope): Promise<number> {
  const { db } = services.ctx;
  const { imageIds = [], operationUuids = [], subjectRefs = [] } = scope;
  if (imageIds.length === 0 && operationUuids.length === 0 && subjectRefs.length === 0) return 0;
  const pending = await db
    .selectFrom('images')
    .select('id')
    .where('bytes', 'is', null)
    .where((eb) => eb.or([
      ...(imageIds.length ? [eb('id', 'in', [...imageIds])] : []),
      ...(operationUuids.length ? [eb('operation_uuid', 'in', [...operationUuids])] : []),
      ...(subjectRefs.length ? [eb('subject_ref', 'in', [...subjectRefs])] : []),
    ]))
    .orderBy('id')
    .execute();
  if (pending.length === 0) return 0;
  const extractor = await services.extractors.get();
  let stored = 0;
  for (let start = 0; start < pending.length; start += BATCH) {
    const ids = pending.slice(start, start + BATCH).map((r) => r.id);
    const rows = await db
      .selectFrom('images as t')
      .innerJoin('images as o', 'o.id', 't.source_image_id')
      .select((eb) => [
        't.id',
        'o.bytes as original',
        eb.selectFrom('face_samples as f').select('f.landmarks').whereRef('f.image_id', '=', 't.source_image_id').orderBy('f.id').limit(1).as('landmarks'),
      ])
      .where('t.id', 'in', ids)
      .where('t.bytes', 'is', null)
      .execute();
    const made = await Promise.all(rows.map(async (row) => {
      const landmarks = landmarksOf(row.landmarks);
      let png: Uint8Array;
      try {
        if (!row.original || !landmarks) throw new Error(`token image ${row.id} cannot be made: its original image or the landmarks of its face are missing`);
        png = await extractor.renderTokenImage(row.original, { landmarks });
      } catch (error) {
        if (isExtractorUnavailable(error)) throw extractionError(error, 'token image');
        await recordException(services.ctx, error, { operationId: 'renderTokenImage' });
        return 0;
      }
      await db.updateTable('images').set({ bytes: png }).where('id', '=', row.id).where('bytes', 'is', null).execute();
      return 1;
    }));
    stored += made.reduce((a: number, b: number) => a + b, 0);
  }
  return stored;
}
