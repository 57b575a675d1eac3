import { describe, expect, it } from 'vitest';
import { unitVector } from '../../test/support/vectors.js';
import { FACE_CALIBRATION } from './calibration.js';
import { FaceGallery } from './face-gallery.js';
import { Gallery } from './gallery.js';
import { cosine, encodeTemplate, quantize } from './template.js';

const V = FACE_CALIBRATION.templateVersion;
const tpl = (e: Float32Array, version = V) =>
  encodeTemplate({ templateVersion: version, records: [{ modality: 'face', embedding: e }] });
/** A vector at a chosen similarity to `base`. */
const near = (base: Float32Array, seed: number, w: number) => {
  const n = unitVector(seed);
  const v = base.map((x, i) => x * w + n[i] * (1 - w));
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
};

describe.each(['auto', 'js'] as const)('FaceGallery (%s kernel)', (kernel) => {
  it('identifies exactly: same order and cosines as brute force', () => {
    const g = new FaceGallery(V, 512, { kernel });
    const vs = Array.from({ length: 300 }, (_, i) => unitVector(i + 1));
    vs.forEach((v, i) => g.add(`s${i}`, quantize(v).q));
    const probe = near(vs[42], 999, 0.7);
    const got = g.identify(quantize(probe).q, { topK: 5 });
    const pq = quantize(probe).q;
    const brute = vs
      .map((v, i) => ({ subject: `s${i}`, c: cosine(pq, quantize(v).q) }))
      .sort((a, b) => b.c - a.c)
      .slice(0, 5);
    expect(got.map((x) => x.subject)).toEqual(brute.map((x) => x.subject));
    got.forEach((x, i) => expect(x.cosine).toBeCloseTo(brute[i].c, 9));
    expect(got[0].subject).toBe('s42');
    expect(got[0].score).toBeCloseTo(FACE_CALIBRATION.cosineToScore(got[0].cosine), 9);
  });

  it('applies the threshold, exclusions, and scores a subject by its best template', () => {
    const g = new FaceGallery(V, 512, { kernel });
    const a = unitVector(1);
    g.add('alice', tpl(near(a, 2, 0.3)));
    g.add('alice', tpl(near(a, 3, 0.9))); // her better template
    g.add('bob', tpl(unitVector(4)));
    const hits = g.identify(tpl(a), { topK: 10, threshold: 48 });
    expect(hits.map((h) => h.subject)).toEqual(['alice']);
    expect(hits[0].score).toBeGreaterThan(48);
    expect(g.identify(tpl(a), { threshold: 48, exclude: new Set(['alice']) })).toEqual([]);
    expect(g.identify(tpl(a), { topK: 1 })).toHaveLength(1);
    const v = g.verify(tpl(a), 'alice')!;
    expect(v.cosine).toBeCloseTo(hits[0].cosine, 9);
    expect(g.verify(tpl(a), 'carol')).toBeNull();
  });

  it('adds, replaces and removes by subject, keeping the others intact', () => {
    const g = new FaceGallery(V, 512, { kernel });
    const vs = Array.from({ length: 50 }, (_, i) => unitVector(i + 100));
    vs.forEach((v, i) => g.add(`s${i}`, quantize(v).q));
    g.add('s7', quantize(unitVector(5000)).q);
    expect(g.size).toBe(51);
    expect(g.remove('s3')).toBe(true);
    expect(g.remove('s3')).toBe(false);
    expect(g.remove('s7')).toBe(true);
    expect(g.size).toBe(48);
    expect(g.subjects).toBe(48);
    for (const i of [0, 10, 49]) expect(g.identify(quantize(vs[i]).q, { topK: 1 })[0].subject).toBe(`s${i}`);
    expect(g.identify(quantize(vs[3]).q, { topK: 1 })[0].subject).not.toBe('s3');
    g.replace('s10', [quantize(vs[3]).q]);
    expect(g.identify(quantize(vs[3]).q, { topK: 1 })[0]).toMatchObject({ subject: 's10' });
    expect(g.identify(quantize(vs[10]).q, { topK: 1 })[0].subject).not.toBe('s10');
  });

  it('rejects templates of another version or length', () => {
    const g = new FaceGallery(V, 512, { kernel });
    expect(() => g.add('x', tpl(unitVector(1), 'face:other@9/p1'))).toThrow(/version/);
    expect(() => g.add('x', new Int8Array(128))).toThrow(/components/);
  });
});

describe('Gallery partitions', () => {
  it('never compares templates of different versions', () => {
    const gal = new Gallery();
    const e = unitVector(1);
    gal.add('old', tpl(e, 'face:old@1/p1'));
    gal.add('new', tpl(near(e, 2, 0.95)));
    expect(gal.versions().sort()).toEqual(['face:old@1/p1', V].sort());
    expect(gal.identify(tpl(e)).map((h) => h.subject)).toEqual(['new']);
    expect(gal.identify(tpl(e, 'face:old@1/p1')).map((h) => h.subject)).toEqual(['old']);
    expect(gal.verify(tpl(e), 'old')).toBeNull();
    gal.replace('new', [tpl(unitVector(3))]);
    expect(gal.identify(tpl(e), { threshold: 48 })).toEqual([]);
    expect(gal.remove('old')).toBe(true);
    expect(gal.identify(tpl(e, 'face:old@1/p1'))).toEqual([]);
  });
});
