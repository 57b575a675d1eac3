// What a failed extraction means to the caller: bad bytes (a 400 naming the field), or an extractor that cannot
// serve now (a 503 to retry, a 429 for the caller's own share); shared by face, voice and token image requests.
import { BiometricError, isClientError } from '../../biometrics/errors.js';
import { DomainError } from '../errors.js';
import { callerQueueError, isCallerQueueError } from './image-admission.js';

/**
 * The extraction pool cannot take the job now (full, slow, closed, or without its models: a 503 to retry; the
 * caller's share of the queue full: a 429; the caller gone: nobody to answer), as opposed to bad input.
 */
export function isExtractorUnavailable(error: unknown): error is BiometricError {
  return (
    BiometricError.is(error) &&
    (error.code === 'EXTRACTOR_BUSY' ||
      error.code === 'EXTRACTION_TIMEOUT' ||
      error.code === 'MODEL_UNAVAILABLE' ||
      error.code === 'EXTRACTOR_CLOSED' ||
      isCallerQueueError(error))
  );
}

/**
 * Turn a face engine error into a domain error: the caller's bad bytes are a 400 naming the field; a full
 * queue or a slow job is a 503 to retry; a missing model is a 503 that says so.
 */
export function extractionError(error: unknown, field: string): unknown {
  if (!BiometricError.is(error)) return error;
  if (isClientError(error.code)) {
    return new DomainError('validation', `${field}: ${error.message}`, {
      errors: [{ field, message: error.message }],
      reason: error.code,
    });
  }
  if (isCallerQueueError(error)) return callerQueueError(error, 'Face');
  if (isExtractorUnavailable(error)) {
    return new DomainError(
      'service-unavailable',
      `Face extraction is unavailable: ${unavailableReason[error.code]}`,
      { reason: error.code, retryAfterSeconds: 2 },
      error.message,
    );
  }
  return error;
}

/**
 * What a caller is told when the extractor cannot serve, by code. The engine's own message (model file
 * paths, the script to run, the extraction service's address) is for the operator: it goes to the log.
 */
export const unavailableReason: Record<string, string> = {
  EXTRACTOR_BUSY: 'the extraction queue is full; retry shortly',
  EXTRACTION_TIMEOUT: 'the extraction took too long; retry shortly',
  EXTRACTOR_CLOSED: 'the extractor is shutting down; retry shortly',
  MODEL_UNAVAILABLE: 'the models are not installed or cannot be loaded on this server',
};
