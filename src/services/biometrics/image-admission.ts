import { BiometricError, imageDimensions, sniffFormat } from '../../biometrics/index.js';
import { DomainError } from '../errors.js';

/**
 * Admission of face images by cost, before any of them is queued. A decode costs in proportion to the pixels
 * a file's header declares, not to its size (a 9 KB JPEG declaring 6300x6300 cost 2.6 s and half a gigabyte),
 * so each image's header is read first and an image over `maxMegapixels` refuses the whole request with a 400
 * naming its field and the limit; no work is spent on the request's other images either.
 *
 * @throws DomainError validation (reason IMAGE_TOO_LARGE or INVALID_IMAGE)
 */
export function admitImages(
  images: readonly Uint8Array[],
  fieldOf: (index: number) => string,
  maxMegapixels: number,
): void {
  for (const [index, bytes] of images.entries()) {
    const size = imageDimensions(bytes);
    // Not JPEG or PNG at all: the decoder names the format (UNSUPPORTED_FORMAT) at no cost.
    if (!size && sniffFormat(bytes).startsWith('other:')) continue;
    const field = fieldOf(index);
    if (!size || size.width === 0 || size.height === 0) {
      const message = 'the image has no readable size in its header (JPEG frame header or PNG IHDR)';
      throw new DomainError('validation', `${field}: ${message}`, {
        errors: [{ field, message }],
        reason: 'INVALID_IMAGE',
      });
    }
    const megapixels = (size.width * size.height) / 1e6;
    if (megapixels > maxMegapixels) {
      const message = `the image is ${size.width}x${size.height} (${megapixels.toFixed(1)} megapixels); at most ${maxMegapixels} megapixels are accepted`;
      throw new DomainError('validation', `${field}: ${message}`, {
        errors: [{ field, message }],
        reason: 'IMAGE_TOO_LARGE',
        maxMegapixels,
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
