import { describe, expect, it } from 'vitest';
import { heldShards } from './matcher-args.js';

describe('bims matcher --shards', () => {
  it('holds every shard by default, or the listed ones, sorted and once each', () => {
    expect(heldShards([], 3)).toEqual([0, 1, 2]);
    expect(heldShards(['--shards', 'all'], 2)).toEqual([0, 1]);
    expect(heldShards(['--shards', '3,1,1'], 4)).toEqual([1, 3]);
  });

  it('names what is wrong with a bad list', () => {
    expect(heldShards(['--shards', '4'], 4)).toMatch(/0\.\.3 \(BIMS_MATCHER_SHARDS=4\)/);
    expect(heldShards(['--shards', 'one'], 4)).toMatch(/--shards one/);
    expect(heldShards(['--shards', '-1'], 4)).toMatch(/--shards -1/);
    expect(heldShards(['--shards'], 4)).toMatch(/needs a value/);
  });
});
