import { describe, expect, it } from 'vitest';
import { fromBase64, toBase64, toBase64Url } from './base64.js';

/** Bytes that cover every value and, sliced, every remainder of a length modulo 3. */
const everyByte = Uint8Array.from({ length: 256 }, (_, i) => i);

describe('base64', () => {
  it('encodes as RFC 4648 (its test vectors, padded)', () => {
    const vectors: [string, string][] = [
      ['', ''],
      ['f', 'Zg=='],
      ['fo', 'Zm8='],
      ['foo', 'Zm9v'],
      ['foob', 'Zm9vYg=='],
      ['fooba', 'Zm9vYmE='],
      ['foobar', 'Zm9vYmFy'],
    ];
    for (const [plain, encoded] of vectors) {
      expect(toBase64(new TextEncoder().encode(plain))).toBe(encoded);
      expect(new TextDecoder().decode(fromBase64(encoded))).toBe(plain);
    }
  });

  it('round-trips every length and byte value, and agrees with Node', () => {
    for (let n = 0; n <= everyByte.length; n++) {
      const bytes = everyByte.subarray(256 - n);
      const standard = toBase64(bytes);
      expect(standard).toBe(Buffer.from(bytes).toString('base64'));
      expect(fromBase64(standard)).toEqual(new Uint8Array(bytes));
      const url = toBase64Url(bytes);
      expect(url).toBe(Buffer.from(bytes).toString('base64url'));
    }
  });

  it('base64url uses - and _ and no padding; the standard form uses + and /', () => {
    const bytes = new Uint8Array([0xfb, 0xff]);
    expect(toBase64(bytes)).toBe('+/8=');
    expect(toBase64Url(bytes)).toBe('-_8');
  });

  it('decodes with or without padding, and ignores whitespace (forgiving base64)', () => {
    expect(fromBase64('Zm9vYg')).toEqual(new TextEncoder().encode('foob'));
    expect(fromBase64('Zm9v\nYmFy')).toEqual(new TextEncoder().encode('foobar'));
  });

  it('refuses characters outside the alphabet and impossible lengths with a SyntaxError', () => {
    expect(() => fromBase64('Zm9v$')).toThrow(SyntaxError);
    expect(() => fromBase64('Zm9vY')).toThrow(SyntaxError); // 5 characters: not a whole number of bytes
    expect(() => fromBase64('-_8=')).toThrow(SyntaxError);
  });

  it('encodes a buffer of several MB (no argument spreading) and decodes it back', () => {
    const big = new Uint8Array(5 * 1024 * 1024 + 1);
    for (let i = 0; i < big.length; i++) big[i] = (i * 2654435761) >>> 24;
    const text = toBase64(big);
    expect(text.length).toBe(Math.ceil(big.length / 3) * 4);
    expect(text).toBe(Buffer.from(big).toString('base64'));
    // Compared as one Buffer: toEqual walks a 5 MB array element by element for minutes.
    expect(Buffer.from(fromBase64(text)).equals(big)).toBe(true);
  });
});
