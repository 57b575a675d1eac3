import { describe, expect, it } from 'vitest';
import { byteaToHex, hexToBytea } from './bytea-hex.js';

describe('bytea hex codec', () => {
  it('round-trips every byte value and matches PostgreSQL hex form', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    const hex = byteaToHex(all);
    expect(hex.slice(0, 8)).toBe('\\x000102');
    expect(hex.endsWith('fdfeff')).toBe(true);
    expect(Array.from(hexToBytea(hex))).toEqual(Array.from(all));
    expect(byteaToHex(new Uint8Array(0))).toBe('\\x');
    expect(hexToBytea('\\x').length).toBe(0);
  });

  it('accepts upper-case digits and refuses what is not hex', () => {
    expect(Array.from(hexToBytea('\\xABcd'))).toEqual([0xab, 0xcd]);
    for (const bad of ['abcd', '\\xabc', '\\xzz', '\\x0g', '\\x\u0130\u0130']) expect(() => hexToBytea(bad)).toThrow(/hex form/);
  });
});
