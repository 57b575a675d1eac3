import { describe, expect, it } from 'vitest';
import { bandFigures, bandOf, worstPairs, type SizedSample } from './eval-bands.js';

/** An int8 template pointing along `angle` in the first two dimensions: cosines between them are cos(difference). */
function template(angle: number): Int8Array {
  const q = new Int8Array(512);
  q[0] = Math.round(100 * Math.cos(angle));
  q[1] = Math.round(100 * Math.sin(angle));
  return q;
}

const sample = (identity: string, file: string, angle: number | null, longerSide?: number): SizedSample => ({
  identity,
  file,
  ...(angle === null ? { error: 'no face' } : { q: template(angle) }),
  ...(longerSide === undefined ? {} : { longerSide }),
});

describe('eval size bands', () => {
  it('puts an image in the band of its longer side, bounds exclusive', () => {
    expect(bandOf(72)).toBe(0);
    expect(bandOf(149)).toBe(0);
    expect(bandOf(150)).toBe(1);
    expect(bandOf(299)).toBe(1);
    expect(bandOf(300)).toBe(2);
    expect(bandOf(1300)).toBe(2);
  });

  it('counts a pair in the band of its smaller image, failures to enrol in their own band', () => {
    const samples = [
      sample('a', 'a/big.jpg', 0, 1300),
      sample('a', 'a/mid.jpg', 0.1, 250),
      sample('a', 'a/small.jpg', 0.2, 72),
      sample('b', 'b/big.jpg', 2, 800),
      sample('b', 'b/mid.jpg', 2.1, 250),
      sample('c', 'c/small.jpg', null, 112),
      sample('d', 'd/unreadable.jpg', null),
    ];
    const [small, mid, big] = bandFigures(samples);
    // Enrolled: a/big, a/mid, a/small, b/big, b/mid. Pairs with a/small (72 px): 2 genuine, 2 impostor.
    expect(small).toMatchObject({ images: 2, failedToEnrol: 1, genuinePairs: 2, impostorPairs: 2 });
    // Among the rest, pairs whose smaller image is 250 px: a/mid-a/big (g), b/mid-b/big (g), a/mid-b/* (2 i),
    // b/mid-a/big (i).
    expect(mid).toMatchObject({ images: 2, failedToEnrol: 0, genuinePairs: 2, impostorPairs: 3 });
    expect(big).toMatchObject({ images: 2, failedToEnrol: 0, genuinePairs: 0, impostorPairs: 1 });
    // Separated identities: no error, every genuine pair accepted; no genuine pair in the big band: no figures.
    expect(small.eer).toBe(0);
    expect(mid.tarAtFar1e3).toBe(1);
    expect(big.eer).toBeNull();
    // Rank-1 by the probe's band: every probe finds its own identity first.
    expect([small.rank1Probes, mid.rank1Probes, big.rank1Probes]).toEqual([1, 2, 2]);
    expect(small.rank1).toBe(1);
  });

  it('measures each band on its own pairs: a confusable small image does not spoil the large band', () => {
    const samples = [
      sample('a', 'a/1.jpg', 0, 500),
      sample('a', 'a/2.jpg', 0.1, 500),
      sample('b', 'b/1.jpg', 2, 500),
      sample('b', 'b/2.jpg', 2.1, 500),
      // A thumbnail of a that looks like b: its genuine pairs score low, its impostor pairs high.
      sample('a', 'a/thumb.jpg', 1.9, 72),
    ];
    const [small, , big] = bandFigures(samples);
    expect(big.eer).toBe(0);
    expect(big.rank1).toBe(1);
    expect(small.eer).toBe(1);
    expect(small.rank1).toBe(0);
  });

  it('lists the lowest genuine and the highest impostor pairs by file', () => {
    const samples = [
      sample('a', 'a/1.jpg', 0, 250),
      sample('a', 'a/2.jpg', 0.5, 250),
      sample('a', 'a/3.jpg', 0.1, 250),
      sample('b', 'b/1.jpg', 1.2, 250),
      sample('c', 'c/1.jpg', null, 250),
    ];
    const { genuine, impostor } = worstPairs(samples, 2);
    expect(genuine.map((p) => [p.a, p.b])).toEqual([
      ['a/1.jpg', 'a/2.jpg'],
      ['a/2.jpg', 'a/3.jpg'],
    ]);
    expect(genuine[0]!.cosine).toBeLessThan(genuine[1]!.cosine);
    expect(impostor.map((p) => [p.a, p.b])).toEqual([
      ['a/2.jpg', 'b/1.jpg'],
      ['a/3.jpg', 'b/1.jpg'],
    ]);
    expect(impostor[0]!.cosine).toBeGreaterThan(impostor[1]!.cosine);
  });
});
