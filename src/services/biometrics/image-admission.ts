import { BiometricError } from '../../biometrics/errors.js';
import { imageCost } from '../../biometrics/image/image-cost.js';
import { DomainError } from '../errors.js';
import { recordException } from '../exceptions/record.js';
import type { ServiceContext } from '../context.js';

/**
 * Admission of face images by cost, before any of them is queued. A decode costs in proportion to what a file's
 * structure promises, not to its size (a 9 KB JPEG declaring 6300x6300 cost 2.6 s and half a gigabyte; 12 KB of
 * empty progressive scans over 4000x4000, 250 million block visits), so each image's markers or chunks are read
 * first (src/biometrics/image/image-cost.ts, no decoding) and an image past a bound refuses the whole request
 * with a 400 naming its field and the bound; no work is spent on the request's other images either.
 *
 * @throws DomainError validation (reason IMAGE_TOO_LARGE, IMAGE_TOO_COSTLY, INVALID_IMAGE or UNSUPPORTED_FORMAT)
 */
export function admitImages(
  images: readonly Uint8Array[],
  fieldOf: (index: number) => string,
  maxMegapixels: number,
): void {
  for (const [index, bytes] of images.entries()) {
    try {
      // Neither JPEG nor PNG (null): the decoder names the format (UNSUPPORTED_FORMAT) at no cost.
      imageCost(bytes, { maxMegapixels });
    } catch (error) {
      if (!BiometricError.is(error)) throw error;
      const field = fieldOf(index);
      const message = error.message;
      throw new DomainError('validation', `${field}: ${message}`, {
        errors: [{ field, message }],
        reason: error.code,
        ...(error.code === 'IMAGE_TOO_LARGE' ? { maxMegapixels } : {}),
      });
    }
  }
}

/** True for the extraction errors that mean the caller, not the request's content, must wait or has gone. */
export function isCallerQueueError(error: BiometricError): boolean {
  return error.code === 'CALLER_QUEUE_FULL' || error.code === 'EXTRACTION_CANCELLED';
}

/** The caller's share of the extraction queue is full (429 to retry), or the caller went away (nobody reads it). */
export function callerQueueError(error: BiometricError, modality: 'Face' | 'Voice'): DomainError {
  if (error.code === 'CALLER_QUEUE_FULL') {
    return new DomainError(
      'too-many-requests',
      `${modality} extraction: this account already has as many extractions waiting as it may; retry shortly`,
      {
        reason: error.code,
        retryAfterSeconds: 2,
      },
    );
  }
  return new DomainError('service-unavailable', `${modality} extraction was cancelled: the request was abandoned`, {
    reason: error.code,
  });
}

/**
 * A decode the pool stopped past its budget is answered as the file's fault (400, DECODE_BUDGET_EXCEEDED), but
 * it also means an image got past the cost bounds that should have refused it: the operator sees it in the
 * exception log. Other errors pass untouched.
 */
export async function recordStoppedDecode(ctx: ServiceContext, error: unknown, field: string): Promise<void> {
  if (!BiometricError.is(error) || error.code !== 'DECODE_BUDGET_EXCEEDED') return;
  await recordException(ctx, new BiometricError(error.code, `${field}: ${error.message}`), {
    operationId: 'analyseFace',
  });
}
