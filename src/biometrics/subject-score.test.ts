import { describe, expect, it } from 'vitest';
import { unitVector } from '../../test/support/vectors.js';
import { FACE_CALIBRATION, MAX_SCORE, farToScore, scoreToFar } from './calibration.js';
import { FaceGallery } from './face-gallery.js';
import { probeScore, sampleScoreFor, subjectScore } from './subject-score.js';
import { quantize } from './template.js';

describe('subject score of several samples', () => {
  it('is the calibrated score for one sample, and the FAR of "any of k" for k samples', () => {
    for (const s of [0, 12, 36, 48, 60, 200]) expect(subjectScore(s, 1)).toBe(s);
    // 1 - (1 - p)^k, exactly as the FAR scale says
    for (const k of [2, 3, 4, 10]) {
      for (const s of [12, 36, 48, 60, 100]) {
        const far = 1 - (1 - scoreToFar(s)) ** k;
        expect(subjectScore(s, k)).toBeCloseTo(farToScore(far), 6);
      }
    }
    // for small FAR, k samples cost 12*log10(k) points: 48 with two samples is about 44.39
    expect(subjectScore(48, 2)).toBeCloseTo(48 - 12 * Math.log10(2), 3);
    expect(subjectScore(0, 5)).toBe(0);
    expect(subjectScore(MAX_SCORE, 4)).toBeCloseTo(MAX_SCORE - 12 * Math.log10(4), 6);
  });

  it('never rises with more samples at one cosine, and rises with the best cosine', () => {
    for (let s = 1; s <= 200; s += 7) {
      for (let k = 1; k < 8; k++) {
        expect(subjectScore(s, k + 1)).toBeLessThanOrEqual(subjectScore(s, k));
        expect(subjectScore(s + 1, k)).toBeGreaterThan(subjectScore(s, k));
      }
    }
  });

  it('counts a probe of j photos against k samples as j*k comparisons', () => {
    for (const j of [1, 2, 3])
      for (const k of [1, 2, 4])
        for (const s of [12, 36, 48, 60, 100])
          expect(probeScore(subjectScore(s, k), j)).toBeCloseTo(subjectScore(s, j * k), 9);
    // two photos against one sample: 48 on its own is about 44.39, as a subject of two samples
    expect(probeScore(48, 2)).toBeCloseTo(48 - 12 * Math.log10(2), 3);
    expect(probeScore(48, 1)).toBe(48);
  });

  it('inverts: the one-sample score a subject of k samples needs for a threshold', () => {
    for (const k of [1, 2, 3, 5])
      for (const t of [24, 36, 48, 60, 72]) expect(subjectScore(sampleScoreFor(t, k), k)).toBeCloseTo(t, 6);
    expect(sampleScoreFor(48, 1)).toBe(48);
  });

  it('is what the gallery answers in VERIFY and IDENTIFY, at and around a threshold', () => {
    const g = new FaceGallery(FACE_CALIBRATION.templateVersion, 512);
    const base = unitVector(1);
    const probe = quantize(base).q;
    // the same best template for a subject of one sample and one of three
    g.add('one', probe);
    for (const seed of [0, 2, 3]) g.add('three', seed === 0 ? probe : quantize(unitVector(seed)).q);
    const one = g.verify(probe, 'one')!,
      three = g.verify(probe, 'three')!;
    expect(three.cosine).toBe(one.cosine);
    expect(three.score).toBeCloseTo(subjectScore(one.score, 3), 9);
    const hits = g.identify(probe, { topK: 5 });
    expect(hits.map((h) => h.subject)).toEqual(['one', 'three']);
    expect(hits.map((h) => h.score)).toEqual([one.score, three.score]);
    // a threshold between the two scores keeps the subject of one sample only
    const between = (one.score + three.score) / 2;
    expect(g.identify(probe, { threshold: between }).map((h) => h.subject)).toEqual(['one']);
  });
});
