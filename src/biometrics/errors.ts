/**
 * Typed errors of the biometric core. The HTTP layer maps `code` to a status:
 * INVALID_IMAGE / INVALID_AUDIO / UNSUPPORTED_FORMAT / IMAGE_TOO_LARGE / IMAGE_TOO_COSTLY / AUDIO_TOO_LONG /
 * DECODE_BUDGET_EXCEEDED / INVALID_TEMPLATE / TEMPLATE_VERSION_MISMATCH -> 4xx,
 * MODEL_UNAVAILABLE -> 503, EXTRACTOR_BUSY -> 503 (retry later), CALLER_QUEUE_FULL -> 429, EXTRACTION_TIMEOUT -> 504,
 * EXTRACTION_CANCELLED -> nobody (the caller has gone), the rest -> 500.
 */
export type BiometricErrorCode =
  /** The bytes claim a supported format but cannot be decoded (truncated, corrupt, zero-sized). */
  | 'INVALID_IMAGE'
  /** The bytes claim to be WAV but cannot be decoded (truncated, inconsistent chunks, no samples). */
  | 'INVALID_AUDIO'
  /** The bytes are not JPEG or PNG (GIF, WebP, HEIC, text ...), or not WAV / a WAV encoding we read (voice). */
  | 'UNSUPPORTED_FORMAT'
  /** The image is larger than the configured pixel limit. */
  | 'IMAGE_TOO_LARGE'
  /**
   * The file's structure promises more decoding work than an image of its size may cost (a JPEG's scans, a
   * PNG's chunks), or its decoding ran past the budget its cost set and was stopped (docs/admission.md).
   */
  | 'IMAGE_TOO_COSTLY'
  /** The recording is longer than the decoder takes. */
  | 'AUDIO_TOO_LONG'
  /**
   * Decoding the image ran past the budget its estimated cost set: its worker was stopped where it ran and
   * replaced (worker pool only). The file, not the service, is at fault: a 4xx.
   */
  | 'DECODE_BUDGET_EXCEEDED'
  /** Template bytes are truncated, foreign or tampered with. */
  | 'INVALID_TEMPLATE'
  /** Two templates (or a template and a gallery) come from different template versions. */
  | 'TEMPLATE_VERSION_MISMATCH'
  /** A model file is missing or does not match its manifest hash. */
  | 'MODEL_UNAVAILABLE'
  /** The extraction queue is full (backpressure). */
  | 'EXTRACTOR_BUSY'
  /** The caller (account) already has as many jobs waiting as it may: its share of the queue is full. */
  | 'CALLER_QUEUE_FULL'
  /** The job was dropped before it started because its caller went away (the request was aborted). */
  | 'EXTRACTION_CANCELLED'
  /** A job took longer than the per-job timeout. */
  | 'EXTRACTION_TIMEOUT'
  /** The extractor was closed. */
  | 'EXTRACTOR_CLOSED'
  /** The worker running the job died; it has been replaced. */
  | 'WORKER_CRASHED'
  /** Any other failure inside the extraction pipeline. */
  | 'EXTRACTION_FAILED';

/** Error carrying a stable machine-readable `code`. Safe to serialise: never contains biometric data. */
export class BiometricError extends Error {
  override readonly name = 'BiometricError';
  constructor(
    readonly code: BiometricErrorCode,
    message: string,
  ) {
    super(message);
  }

  /** Plain object form, used to carry the error across a worker boundary. */
  toJSON(): { code: BiometricErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }

  /** True if `e` is a BiometricError, also across realms (worker threads). */
  static is(e: unknown): e is BiometricError {
    return (
      e instanceof BiometricError ||
      (typeof e === 'object' && e !== null && (e as { name?: string }).name === 'BiometricError')
    );
  }
}

/** Returns true when `code` describes a problem of the caller's input (to be answered with a 4xx). */
export function isClientError(code: BiometricErrorCode): boolean {
  return (
    code === 'INVALID_IMAGE' ||
    code === 'INVALID_AUDIO' ||
    code === 'UNSUPPORTED_FORMAT' ||
    code === 'IMAGE_TOO_LARGE' ||
    code === 'IMAGE_TOO_COSTLY' ||
    code === 'AUDIO_TOO_LONG' ||
    code === 'DECODE_BUDGET_EXCEEDED' ||
    code === 'INVALID_TEMPLATE' ||
    code === 'TEMPLATE_VERSION_MISMATCH'
  );
}
