/**
 * PostgreSQL's hex text form of bytea (`\x0a1b...`), encoded and decoded fast.
 *
 * PGlite passes parameters and results as text. Its own bytea codec maps every byte through
 * `toString(16).padStart(2, '0')` and back through `parseInt` on two-character substrings, which made the
 * storage of one enrolment's image, token image and template cost about 25 ms of the main thread (measured
 * with a CPU profile of `npm run bench -- api`). These table-driven versions do the same in a tiny fraction.
 */

const HEX = new TextEncoder().encode('0123456789abcdef');
const ascii = new TextDecoder('latin1');

/** Value of each ASCII hex digit (either case), -1 for anything else. */
const NIBBLE = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) NIBBLE[48 + i] = i;
for (let i = 0; i < 6; i++) {
  NIBBLE[65 + i] = 10 + i;
  NIBBLE[97 + i] = 10 + i;
}

/** `\x` followed by two lower-case hex digits per byte. */
export function byteaToHex(bytes: Uint8Array): string {
  const out = new Uint8Array(2 + bytes.length * 2);
  out[0] = 92; // backslash
  out[1] = 120; // x
  for (let i = 0, o = 2; i < bytes.length; i++, o += 2) {
    const b = bytes[i]!;
    out[o] = HEX[b >> 4]!;
    out[o + 1] = HEX[b & 15]!;
  }
  return ascii.decode(out);
}

/**
 * Bytes of the hex form `\x...` (the only output form of bytea_output = 'hex', PostgreSQL's default).
 * @throws Error on anything that is not that form, rather than returning wrong bytes.
 */
export function hexToBytea(text: string): Uint8Array {
  if (text.charCodeAt(0) !== 92 || text.charCodeAt(1) !== 120 || text.length % 2 !== 0) {
    throw new Error('bytea value is not in hex form');
  }
  const out = new Uint8Array((text.length - 2) / 2);
  for (let i = 0, p = 2; i < out.length; i++, p += 2) {
    const hi = NIBBLE[text.charCodeAt(p) & 127]!;
    const lo = NIBBLE[text.charCodeAt(p + 1) & 127]!;
    if (hi < 0 || lo < 0 || text.charCodeAt(p) > 127 || text.charCodeAt(p + 1) > 127) throw new Error('bytea value is not in hex form');
    out[i] = (hi << 4) | lo;
  }
  return out;
}
