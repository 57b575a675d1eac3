import type { OperationSpec } from './types.js';

/**
 * The problems of every operation that runs face or voice extraction (src/services/biometrics): the caller's
 * share of the extraction queue full, or the pool unable to take the job. An image over the pixel limit is a
 * 400 naming its field, like any other bad image.
 */
export const extractionProblems: NonNullable<OperationSpec['problems']> = {
  429: 'This account already has as many extractions waiting as it may; retry after Retry-After',
  503: 'Extraction (or, for a licensed operation, the licence check) is unavailable for now (queue full, job too slow, models missing, shutting down), or a shard of the matcher cluster did not answer in time (component: matcher; never a partial candidate list); retry after Retry-After',
};

/** The refusals of an operation that counts against the licence (src/services/licensing/usage.ts). */
export const licenceProblems: NonNullable<OperationSpec['problems']> = {
  402: 'The licence quota for this operation is spent (licence-exhausted)',
  403: 'Credentials lack the scope, or the licence is expired or does not cover the operation (licence-expired, licence-invalid)',
};
