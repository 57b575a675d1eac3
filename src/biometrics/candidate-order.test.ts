import { describe, expect, it } from 'vitest';
import { unitVector } from '../../test/support/vectors.js';
import { compareKeys, exactTopK, mergeCandidates } from './candidate-order.js';
import { FaceGallery } from './face-gallery.js';
import { quantize } from './template.js';

describe('the one candidate order', () => {
  it('orders the service keys numerically, any strings totally', () => {
    const keys = ['10', '9', '100', '1', '2'];
    expect([...keys].sort(compareKeys)).toEqual(['1', '2', '9', '10', '100']);
    expect(compareKeys('b', 'a')).toBeGreaterThan(0);
    expect(compareKeys('7', '7')).toBe(0);
  });

  it('gives the exact top K in key order when equal scores straddle the cut, and parts merge to the whole', async () => {
    // 40 subjects; every template is shared by four subjects (equal scores), added in scrambled key order.
    const vectors = Array.from({ length: 10 }, (_, i) => quantize(unitVector(i + 1)).q);
    const keys = Array.from({ length: 40 }, (_, i) => String(((i * 17) % 40) + 1));
    const whole = new FaceGallery('v', 512);
    const parts = [new FaceGallery('v', 512), new FaceGallery('v', 512), new FaceGallery('v', 512)];
    keys.forEach((key, i) => {
      whole.add(key, vectors[i % 10]!);
      parts[Number(key) % 3]!.add(key, vectors[i % 10]!);
    });
    for (let p = 0; p < 10; p++) {
      const probe = quantize(unitVector(p + 1).map((x, k) => x + unitVector(100 + p)[k]! * 0.3)).q;
      for (const topK of [1, 2, 3, 5, 6, 13]) {
        const exact = await exactTopK((o) => whole.identify(probe, o), { topK });
        const all = whole.identify(probe, { topK: 40 });
        // The exact list: all 40 by score, then key.
        const expected = [...all]
          .sort((a, b) => b.cosine - a.cosine || compareKeys(a.subject, b.subject))
          .slice(0, topK);
        expect(exact).toEqual(expected);
        const fromParts = await Promise.all(parts.map((g) => exactTopK((o) => g.identify(probe, o), { topK })));
        expect(mergeCandidates(fromParts, topK)).toEqual(expected);
      }
    }
  });
});
