/**
 * The SDK's base64 helpers (exported by its index for callers building `remoteVerify` bodies): the service's
 * one base64 module, which runs in browsers too.
 */
export { fromBase64, toBase64 } from '../encoding/base64.js';
