/**
 * Base64 without `Buffer`: the SDK runs in browsers (and workers), where only `btoa`/`atob` exist. The service
 * takes templates as standard base64 in JSON bodies (`template` of remoteVerify).
 */

/** Standard base64 of bytes (chunked so large inputs do not overflow `String.fromCharCode`'s argument list). */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** Bytes of a standard base64 string. @throws DOMException on characters outside the alphabet. */
export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}
