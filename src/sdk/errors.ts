/** What went wrong on the device, as a stable code an application can branch on. */
export type FaceSdkErrorCode =
  /** No face was found in the image. */
  | 'NO_FACE'
  /** More than one face was found and `allowMultipleFaces` was not set (mirrors the service's default). */
  | 'MULTIPLE_FACES'
  /** The input is not something the SDK can turn into pixels (see `ImageInput`). */
  | 'UNSUPPORTED_INPUT'
  /** A model or wasm file could not be fetched from the configured base URL. */
  | 'ASSET_UNAVAILABLE'
  /** `close()` was called. */
  | 'CLOSED';

/**
 * Errors the SDK itself raises. Failures inside the shared pipeline (unreadable image, corrupt model ...) keep
 * their `BiometricError` from src/biometrics, so both carry a `code` and neither carries biometric data.
 */
export class FaceSdkError extends Error {
  override readonly name = 'FaceSdkError';
  constructor(
    readonly code: FaceSdkErrorCode,
    message: string,
  ) {
    super(message);
  }
}
