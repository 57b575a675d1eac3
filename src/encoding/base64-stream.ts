/**
 * Standard base64 (RFC 4648, padded) decoded piece by piece as a body arrives, so that a photo of 10 MB inside
 * a JSON body becomes bytes in steps of one network chunk instead of one long turn of the event loop after the
 * whole body is in. It accepts exactly what `fromBase64` accepts from the schema's check (`z.base64()`): the
 * alphabet, a length that is a multiple of 4, and one or two `=` only at the end; no whitespace.
 *
 * @example
 * const d = new Base64Decoder();
 * d.push(ascii('Zm9v')); d.push(ascii('YmE=')); d.finish(); // bytes of 'foobar'
 */

/** Value of each alphabet byte; 64 for `=`, 255 for anything else. */
const VALUE = new Uint8Array(256).fill(255);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries())
  VALUE[c.charCodeAt(0)] = i;
const PAD = 64;
VALUE[0x3d] = PAD;

/** The text is not padded standard base64; the message says why, in the words the schema uses. */
export class NotBase64 extends SyntaxError {
  override name = 'NotBase64';
}

export class Base64Decoder {
  private readonly out: Uint8Array[] = [];
  private size = 0;
  /** Up to three characters' values waiting for the fourth. */
  private readonly quad = new Uint8Array(4);
  private held = 0;
  private padding = 0;
  private characters = 0;

  /** How many characters (padding included) were given so far. */
  get length(): number {
    return this.characters;
  }

  /**
   * Decode `text[start..end)`, ASCII bytes of base64.
   * @throws NotBase64 at the first byte outside the alphabet or after the padding.
   */
  push(text: Uint8Array, start = 0, end = text.length): void {
    const out = new Uint8Array(Math.ceil(((end - start + this.held) * 3) / 4));
    let o = 0;
    const quad = this.quad;
    let held = this.held;
    for (let i = start; i < end; i++) {
      const v = VALUE[text[i]!]!;
      if (v === 255) throw new NotBase64('must be base64 (RFC 4648, padded)');
      if (v === PAD) {
        // `=` only fills the last one or two places of the last quad.
        if (held < 2) throw new NotBase64('must be base64 (RFC 4648, padded)');
        this.padding++;
        quad[held++] = 0;
      } else {
        if (this.padding > 0) throw new NotBase64('must be base64 (RFC 4648, padded)');
        quad[held++] = v;
      }
      if (held === 4) {
        const n = (quad[0]! << 18) | (quad[1]! << 12) | (quad[2]! << 6) | quad[3]!;
        out[o++] = n >> 16;
        out[o++] = (n >> 8) & 0xff;
        out[o++] = n & 0xff;
        held = 0;
      }
    }
    this.held = held;
    this.characters += end - start;
    if (o > 0) {
      this.out.push(out.subarray(0, o));
      this.size += o;
    }
  }

  /**
   * The bytes, once the text has ended.
   * @throws NotBase64 for a length that is not a multiple of 4 (padding anywhere but the end is refused by push).
   */
  finish(): Uint8Array<ArrayBuffer> {
    const { pieces, size } = this.finishPieces();
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const piece of pieces) {
      bytes.set(piece, at);
      at += piece.length;
    }
    return bytes;
  }

  /**
   * The bytes as the pieces they were decoded in, for a caller that joins them at its own pace.
   * @throws NotBase64 as {@link finish} does.
   */
  finishPieces(): { pieces: Uint8Array[]; size: number } {
    if (this.held !== 0) throw new NotBase64('must be base64 (RFC 4648, padded)');
    const size = this.size - this.padding;
    // The padding's zero bytes end the last piece.
    const pieces = [...this.out];
    this.out.length = 0;
    if (this.padding > 0) pieces[pieces.length - 1] = pieces.at(-1)!.subarray(0, pieces.at(-1)!.length - this.padding);
    return { pieces, size };
  }
}
