import { describe, expect, it } from 'vitest';
import { SLOTS, holds, shardOf, shardOfSlot, slotOf, slotRange } from './shard-map.js';

describe('shard map', () => {
  it('gives every slot to exactly one shard, in contiguous ranges, for any shard count', () => {
    for (const shards of [1, 2, 3, 4, 7, 32, 1000]) {
      let next = 0;
      for (let s = 0; s < shards; s++) {
        const r = slotRange(s, shards);
        expect(r.from).toBe(next);
        expect(r.to).toBeGreaterThan(r.from);
        expect(shardOfSlot(r.from, shards)).toBe(s);
        expect(shardOfSlot(r.to - 1, shards)).toBe(s);
        next = r.to;
      }
      expect(next).toBe(SLOTS);
    }
  });

  it('splits shard s of S into shards 2s and 2s+1 of 2S, exactly its two halves', () => {
    for (const shards of [1, 3, 4, 5, 16]) {
      for (let s = 0; s < shards; s++) {
        const whole = slotRange(s, shards);
        const [lo, hi] = [slotRange(2 * s, 2 * shards), slotRange(2 * s + 1, 2 * shards)];
        expect([lo.from, lo.to === hi.from, hi.to]).toEqual([whole.from, true, whole.to]);
      }
    }
  });

  it('spreads consecutive ids evenly over the shards (within 1% of an even share for 100,000 ids)', () => {
    for (const shards of [2, 4, 10]) {
      const counts = new Array<number>(shards).fill(0);
      for (let id = 1; id <= 100_000; id++) counts[shardOf(id, shards)]!++;
      for (const c of counts) expect(Math.abs(c - 100_000 / shards)).toBeLessThan(1000);
    }
  });

  it('hashes the whole int4 range into 15 bits', () => {
    for (const id of [1, 2, 32_767, 65_536, 2 ** 31 - 1]) {
      const slot = slotOf(id);
      expect(Number.isInteger(slot) && slot >= 0 && slot < SLOTS).toBe(true);
      expect(holds(slotRange(shardOf(id, 7), 7), id)).toBe(true);
    }
  });

  it('refuses shard counts and shard numbers outside the map', () => {
    expect(() => slotRange(0, 0)).toThrow(RangeError);
    expect(() => slotRange(4, 4)).toThrow(RangeError);
    expect(() => slotRange(0, SLOTS + 1)).toThrow(RangeError);
  });
});
