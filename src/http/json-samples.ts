import { Base64Decoder, NotBase64 } from '../encoding/base64-stream.js';

/**
 * A JSON body read as it arrives, chunk by chunk, so that no step holds the event loop for the whole body:
 *
 * - base64 strings where the operation carries samples (`faces.*.image`, `voices.*.audio`, `template`: the
 *   paths its form declares) are decoded into bytes on the way and left out of the text; the text keeps a
 *   placeholder string in their place, and {@link JsonSamples.end} answers the text and the bytes to put back;
 * - the nesting depth is counted on the way (the old count over the whole text took 120-230 ms for 42 MB);
 * - everything else is passed on as text, decoded as strict UTF-8 piece by piece.
 *
 * What is left for the caller is one `JSON.parse` of the text, which for a sample-carrying operation is at most
 * `maxOtherBytes` long. The scan follows JSON's structure only as far as strings, keys, arrays and objects go;
 * whether the rest is JSON is the parser's to say, and the placeholders are strings where strings were, so a
 * malformed body stays malformed.
 */

/** A sample's bytes and where they go, once the text has been parsed. */
interface Sample {
  path: (string | number)[];
  /** The string standing in the text where the sample was. */
  placeholder: string;
  /** The bytes, in the pieces they were decoded in (joined by the caller, at its pace). */
  pieces: Uint8Array[];
  size: number;
}

/** A refusal met while scanning, naming the field (`body.faces.0.image`) or the body. */
export class JsonScanError extends Error {
  override name = 'JsonScanError';
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field} ${reason}`);
  }
}

interface Frame {
  array: boolean;
  /** The member being read (objects): its key, or null for a key too long to be one we look for. */
  key: string | null;
  /** Objects: the next string is a key. */
  expectKey: boolean;
  /** Arrays: the index of the item being read. */
  index: number;
}

/** Keys longer than this are never among the sample paths, so they are not decoded. */
const MAX_KEY_BYTES = 64;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SLASH = 0x2f;

export class JsonSamples {
  private readonly frames: Frame[] = [];
  private readonly text: string[] = [];
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true });
  private readonly samples: Sample[] = [];
  private textBytes = 0;
  // Inside a string: whether it is a key, a sample (then its decoder), and an escape pending.
  private inString = false;
  private stringIsKey = false;
  private escaped = false;
  private sample: Base64Decoder | null = null;
  private keyBytes: number[] = [];
  private keyTooLong = false;

  /**
   * @param paths where samples are: keys, and `*` for any item of an array (`['faces', '*', 'image']`)
   * @param maxOtherBytes most bytes the body may carry outside the samples (Infinity: no bound)
   * @param maxDepth deepest nesting of arrays and objects
   */
  constructor(
    private readonly paths: readonly (readonly string[])[],
    private readonly maxOtherBytes: number,
    private readonly maxDepth: number,
  ) {}

  /**
   * Scan the next piece of the body.
   * @throws JsonScanError for a sample that is not base64, nesting deeper than `maxDepth`, or text past `maxOtherBytes`.
   */
  write(chunk: Uint8Array): void {
    let from = 0; // start of the text not yet passed on
    let i = 0;
    while (i < chunk.length) {
      if (this.sample) {
        // A sample's characters go to its decoder up to the closing quote or an escape.
        let end = chunk.indexOf(QUOTE, i);
        if (end === -1) end = chunk.length;
        if (this.escaped) {
          // JSON lets a writer escape `/` (PHP does); no other escape is a base64 character.
          if (chunk[i] !== SLASH) this.notBase64();
          this.decode(chunk, i, i + 1);
          this.escaped = false;
          i++;
          continue;
        }
        const escape = chunk.indexOf(BACKSLASH, i);
        const stop = escape !== -1 && escape < end ? escape : end;
        this.decode(chunk, i, stop);
        if (stop === escape) {
          this.escaped = true;
          i = stop + 1;
          continue;
        }
        if (end === chunk.length) return;
        this.endSample();
        i = end + 1;
        from = i;
        continue;
      }
      const byte = chunk[i]!;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (byte === BACKSLASH) this.escaped = true;
        else if (byte === QUOTE) {
          this.inString = false;
          if (this.stringIsKey) this.endKey();
          i++;
          continue;
        }
        if (this.stringIsKey && !this.keyTooLong) {
          if (this.keyBytes.length < MAX_KEY_BYTES) this.keyBytes.push(byte);
          else this.keyTooLong = true;
        }
        i++;
        continue;
      }
      const top = this.frames[this.frames.length - 1];
      if (byte === QUOTE) {
        this.stringIsKey = top !== undefined && !top.array && top.expectKey;
        if (!this.stringIsKey && this.atSamplePath()) {
          this.pass(chunk, from, i);
          this.sample = new Base64Decoder();
          from = i + 1;
        } else {
          this.inString = true;
          this.keyBytes = [];
          this.keyTooLong = false;
        }
      } else if (byte === 0x7b || byte === 0x5b) {
        if (this.frames.length === this.maxDepth)
          throw new JsonScanError('body', `is nested deeper than ${this.maxDepth} levels`);
        this.frames.push({ array: byte === 0x5b, key: null, expectKey: true, index: 0 });
      } else if (byte === 0x7d || byte === 0x5d) this.frames.pop();
      else if (byte === 0x3a && top && !top.array) top.expectKey = false;
      else if (byte === 0x2c && top) {
        if (top.array) top.index++;
        else top.expectKey = true;
      }
      i++;
    }
    if (!this.sample) this.pass(chunk, from, chunk.length);
  }

  /** The text (samples replaced by their placeholders) and the samples, once the body has ended. */
  end(): { text: string; samples: Sample[] } {
    try {
      this.text.push(this.utf8.decode());
    } catch {
      throw new JsonScanError('body', 'is not valid UTF-8');
    }
    return { text: this.text.join(''), samples: this.samples };
  }

  private atSamplePath(): boolean {
    const frames = this.frames;
    return this.paths.some(
      (path) =>
        path.length === frames.length &&
        path.every((step, d) => (frames[d]!.array ? step === '*' : step !== '*' && frames[d]!.key === step)),
    );
  }

  private decode(chunk: Uint8Array, from: number, to: number) {
    try {
      this.sample!.push(chunk, from, to);
    } catch (error) {
      if (error instanceof NotBase64) this.notBase64();
      throw error;
    }
  }

  private notBase64(): never {
    throw new JsonScanError(`body.${this.currentPath().join('.')}`, 'must be base64 (RFC 4648, padded)');
  }

  private endSample() {
    let bytes: { pieces: Uint8Array[]; size: number };
    try {
      bytes = this.sample!.finishPieces();
    } catch {
      this.notBase64();
    }
    const placeholder = `\u0000sample ${this.samples.length}`;
    this.samples.push({ path: this.currentPath(), placeholder, ...bytes });
    this.sample = null;
    this.passText(JSON.stringify(placeholder));
  }

  private endKey() {
    const top = this.frames[this.frames.length - 1]!;
    if (this.keyTooLong) top.key = null;
    else if (this.keyBytes.some((b) => b > 0x7e))
      top.key = null; // the keys looked for are ASCII
    else {
      const raw = String.fromCharCode(...this.keyBytes);
      // An escaped key (`"fa\u0063es"`) is the key it spells, or no key of ours if it does not parse.
      try {
        top.key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
      } catch {
        top.key = null;
      }
    }
  }

  private currentPath(): (string | number)[] {
    return this.frames.map((f) => (f.array ? f.index : (f.key ?? '?')));
  }

  private pass(chunk: Uint8Array, from: number, to: number) {
    if (to <= from) return;
    this.textBytes += to - from;
    if (this.textBytes > this.maxOtherBytes)
      throw new JsonScanError('body', `carries more than ${this.maxOtherBytes} bytes besides its samples`);
    try {
      this.text.push(this.utf8.decode(chunk.subarray(from, to), { stream: true }));
    } catch {
      throw new JsonScanError('body', 'is not valid UTF-8');
    }
  }

  private passText(text: string) {
    this.textBytes += text.length;
    this.text.push(text);
  }
}
