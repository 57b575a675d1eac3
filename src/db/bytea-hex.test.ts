import { describe, expect, it } from 'vitest';
import { hexToBytea } from './bytea-hex.js';

describe('bytea hex codec', () => {
  it('reads every byte value of PostgreSQL hex form', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    const hex = `\\x${Array.from(all, (b) => b.toString(16).padStart(2, '0')).join('')}`;
    expect(Array.from(hexToBytea(hex))).toEqual(Array.from(all));
    expect(hexToBytea('\\x').length).toBe(0);
  });

  it('accepts upper-case digits and refuses what is not hex', () => {
    expect(Array.from(hexToBytea('\\xABcd'))).toEqual([0xab, 0xcd]);
    for (const bad of ['abcd', '\\xabc', '\\xzz', '\\x0g', '\\x\u0130\u0130'])
      expect(() => hexToBytea(bad)).toThrow(/hex form/);
  });
});
