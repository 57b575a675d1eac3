import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Base64Decoder, NotBase64 } from './base64-stream.js';
import { fromBase64, toBase64 } from './base64.js';

const ascii = (s: string) => new TextEncoder().encode(s);

/** Decode `text` given in pieces cut at `cuts`. */
function decodeInPieces(text: string, cuts: number[]): Uint8Array {
  const d = new Base64Decoder();
  const bytes = ascii(text);
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    d.push(bytes, from, Math.max(from, Math.min(cut, bytes.length)));
    from = Math.max(from, Math.min(cut, bytes.length));
  }
  return d.finish();
}

describe('Base64Decoder', () => {
  it('decodes every length and byte value, whatever the pieces', () => {
    const everyByte = Uint8Array.from({ length: 300 }, (_, i) => (i * 7919) & 0xff);
    for (let n = 0; n <= 40; n++) {
      const bytes = everyByte.subarray(0, n);
      const text = toBase64(bytes);
      for (const cuts of [[], [1], [2, 3], [5, 6, 7, 8], [text.length - 1], [text.length - 2]])
        expect(decodeInPieces(text, cuts)).toEqual(new Uint8Array(bytes));
    }
    expect(decodeInPieces(toBase64(everyByte), [17, 100, 101, 399])).toEqual(everyByte);
  });

  it("accepts exactly what the schema's base64 check accepts", () => {
    const schema = z.base64();
    const samples = [
      '',
      'Zg==',
      'Zm8=',
      'Zm9v',
      'Zg',
      'Zg=',
      'Z===',
      '=',
      '====',
      'Zg==Zg==',
      'Zm9v Zm9v',
      'Zm9v\n',
      'Zm-v',
      'Zm_v',
      'Zm9',
      'Z',
      'AB=C',
      'ABC==',
      'QUJD',
      'QU+/',
      'é',
    ];
    for (const text of samples) {
      let ours: boolean;
      try {
        const bytes = decodeInPieces(text, [1, 2]);
        ours = true;
        expect(bytes).toEqual(fromBase64(text));
      } catch (error) {
        expect(error).toBeInstanceOf(NotBase64);
        ours = false;
      }
      expect([text, ours]).toEqual([text, schema.safeParse(text).success]);
    }
  });
});
