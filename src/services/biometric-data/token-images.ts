import {
  listPendingTokenImageIds,
  listTokenImageSources,
  storeTokenImage,
  type ImageScope,
} from '../../db/repositories/biometric-data/token-images.js';
import { recordException } from '../exceptions/record.js';
import { extractionError, isExtractorUnavailable } from '../biometrics/extraction-errors.js';
import type { ExtractorProvider } from '../biometrics/extractor-provider.js';
import type { ServiceContext } from '../context.js';

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

/** Token images rendered at a time: each holds its original photo in memory while it is made. */
const BATCH = 8;

type Landmarks = [number, number][];

function landmarksOf(value: unknown): Landmarks | undefined {
  return Array.isArray(value) && value.length >= 68 ? (value as Landmarks) : undefined;
}

/**
 * Render and store the token images of `scope` that have not been made yet; answers how many it stored. A
 * busy or unavailable extraction pool answers 503 (the read can be retried); a token that cannot be made from
 * what is stored goes to the exception log and stays pending, and the read goes on without it.
 */
export async function renderPendingTokenImages(
  services: { ctx: ServiceContext; extractors: ExtractorProvider },
  scope: ImageScope,
): Promise<number> {
  const { db } = services.ctx;
  const pending = await listPendingTokenImageIds(db, scope);
  if (pending.length === 0) return 0;
  const extractor = await services.extractors.get();
  let stored = 0;
  for (let start = 0; start < pending.length; start += BATCH) {
    const rows = await listTokenImageSources(db, pending.slice(start, start + BATCH));
    const made = await Promise.all(
      rows.map(async (row) => {
        const landmarks = landmarksOf(row.landmarks);
        let png: Uint8Array;
        try {
          if (!row.original || !landmarks)
            throw new Error(
              `token image ${row.id} cannot be made: its original image or the landmarks of its face are missing`,
            );
          png = await extractor.renderTokenImage(row.original, { landmarks });
        } catch (error) {
          if (isExtractorUnavailable(error)) throw extractionError(error, 'token image');
          await recordException(services.ctx, error, { operationId: 'renderTokenImage' });
          return 0;
        }
        await storeTokenImage(db, row.id, png);
        return 1;
      }),
    );
    stored += made.reduce((a: number, b: number) => a + b, 0);
  }
  return stored;
}
