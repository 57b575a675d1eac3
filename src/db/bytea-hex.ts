/**
 * PostgreSQL's hex text form of bytea (`\x0a1b...`), decoded fast.
 *
 * PGlite returns results as text. Its own bytea parser calls `parseInt` on every two-character substring,
 * which made reading images back (downloads, re-extraction) slow; this table-driven version does the same in
 * a tiny fraction. (Parameters need no codec: connect.ts hands PGlite the bytes, which it binds in binary.)
 */

/** Value of each ASCII hex digit (either case), -1 for anything else. */
const NIBBLE = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) NIBBLE[48 + i] = i;
for (let i = 0; i < 6; i++) {
  NIBBLE[65 + i] = 10 + i;
  NIBBLE[97 + i] = 10 + i;
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
    if (hi < 0 || lo < 0 || text.charCodeAt(p) > 127 || text.charCodeAt(p + 1) > 127)
      throw new Error('bytea value is not in hex form');
    out[i] = (hi << 4) | lo;
  }
  return out;
}
