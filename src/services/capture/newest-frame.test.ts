import { describe, expect, it } from 'vitest';
import { newestOnly } from './newest-frame.js';

/** A source that delivers `count` items `gapMs` apart, like a decoder sampling a camera. */
async function* paced(count: number, gapMs: number): AsyncGenerator<number> {
  for (let i = 0; i < count; i++) {
    await new Promise((resolve) => setTimeout(resolve, gapMs));
    yield i;
  }
}

describe('newestOnly', () => {
  it('hands a slow reader the newest item and counts the ones it had no time for', async () => {
    let dropped = 0;
    const seen: number[] = [];
    for await (const item of newestOnly(paced(20, 5), (n) => (dropped += n))) {
      seen.push(item);
      // The reader takes about four gaps per item: it must never be handed an old one.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(seen.length).toBeLessThan(20);
    expect(seen.at(-1)).toBe(19); // the last item is never lost
    expect([...seen].sort((a, b) => a - b)).toEqual(seen); // in order, no repeats
    expect(new Set(seen).size).toBe(seen.length);
    expect(dropped + seen.length).toBe(20);
  });

  it('a reader faster than the source sees every item', async () => {
    const seen: number[] = [];
    for await (const item of newestOnly(paced(10, 5))) seen.push(item);
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('an error of the source reaches the reader after the items before it', async () => {
    async function* failing(): AsyncGenerator<number> {
      yield 1;
      await new Promise((resolve) => setTimeout(resolve, 5));
      throw new Error('decoder went away');
    }
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const item of newestOnly(failing())) seen.push(item);
      })(),
    ).rejects.toThrow('decoder went away');
    expect(seen).toEqual([1]);
  });

  it('a reader that stops early stops taking items', async () => {
    const seen: number[] = [];
    for await (const item of newestOnly(paced(10, 2))) {
      seen.push(item);
      if (seen.length === 2) break;
    }
    expect(seen.length).toBe(2);
  });
});
