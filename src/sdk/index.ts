/**
 * BIMS face SDK for browsers: the entry bundled by `npm run build:sdk` into dist/sdk/bims-face-sdk.js.
 *
 * Remote verification keeps biometric samples on the device: the SDK extracts a fresh template locally with the
 * service's own WebAssembly pipeline and `remoteVerify` sends only that template plus the encrypted enrolled
 * one. This module must stay free of `node:` imports and runtime globals other than web ones; the build fails
 * if any Node built-in reaches the bundle.
 *
 * @example
 * import { createFaceSdk, remoteVerify } from '/bims-sdk/bims-face-sdk.js';
 * const sdk = await createFaceSdk({ modelBaseUrl: '/bims-sdk/', wasmBaseUrl: '/bims-sdk/' });
 * const fresh = await sdk.extractTemplate(photoBlob);
 * const { verified } = await remoteVerify('https://bims.example', { accessToken }, { encryptedTemplate, template: fresh.template });
 */
export {
  createFaceSdk,
  type DeviceTemplate,
  type ExtractTemplateOptions,
  type FaceSdk,
  type FaceSdkOptions,
} from './face-sdk.js';
export {
  remoteVerify,
  RemoteVerifyError,
  type Credentials,
  type RemoteVerifyOptions,
  type RemoteVerifyRequest,
  type RemoteVerifyResult,
} from './remote-verify.js';
export { FaceSdkError, type FaceSdkErrorCode } from './errors.js';
export {
  captureWithGateway,
  CaptureError,
  type CaptureEvent,
  type CaptureOptions,
  type CaptureOutcome,
} from './gateway-capture.js';
export { toBase64, fromBase64 } from '../encoding/base64.js';
export type { ImageInput } from './image-input.js';
export { BiometricError } from '../biometrics/errors.js';
