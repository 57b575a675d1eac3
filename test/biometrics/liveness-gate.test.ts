import { beforeAll, describe, expect, it } from 'vitest';
import { analyseImage } from '../../src/biometrics/face/pipeline.js';
import type { AnalyseOptions, ImageAnalysis } from '../../src/biometrics/face/analysis.js';
import type { ModelRunner } from '../../src/biometrics/face/runner.js';
import { countingRunner, getRunner, photo } from './helpers.js';

/**
 * A live capture measures passive liveness only on the faces its frame judge can keep (`livenessGate`, issue 33):
 * a face of the minimum quality, alone in the picture unless several are allowed. Such a face is measured as
 * ever; another is as without liveness (NaN, no LIVENESS warning) and the liveness model does not run for it.
 */
let runner: ModelRunner;

beforeAll(async () => {
  runner = await getRunner();
});

const CAPTURE: AnalyseOptions = { checks: true, attributes: false, liveness: true, embedding: false };

async function analysed(bytes: Uint8Array, livenessGate?: AnalyseOptions['livenessGate']) {
  const counting = countingRunner(runner);
  const analysis = await analyseImage(counting.runner, bytes, {
    ...CAPTURE,
    ...(livenessGate ? { livenessGate } : {}),
  });
  return { analysis, livenessRuns: counting.ran.filter((id) => id === 'fr_liveness').length };
}

/** What must not change whether liveness was measured or not. */
const withoutLiveness = (a: ImageAnalysis) => ({
  ...a,
  timings: undefined,
  faces: a.faces.map(({ livenessScore: _l, icaoWarnings, ...rest }) => ({
    ...rest,
    icaoWarnings: icaoWarnings.filter((w) => w !== 'LIVENESS'),
  })),
});

describe('passive liveness only on the faces a capture can keep', () => {
  const franck = photo('labelled/franck/franck_02159.jpg');

  it('a face that passes the gates is measured as without the gate', async () => {
    const all = await analysed(franck);
    const gated = await analysed(franck, { minQuality: 50, allowMultiple: false });
    expect(all.analysis.faces[0]!.quality).toBeGreaterThanOrEqual(50);
    expect(gated.livenessRuns).toBe(1);
    expect({ ...gated.analysis, timings: undefined }).toEqual({ ...all.analysis, timings: undefined });
  });

  it('a face below the minimum quality is not: NaN, no LIVENESS warning, no liveness model run, the rest as ever', async () => {
    const all = await analysed(franck);
    const quality = all.analysis.faces[0]!.quality;
    const refused = await analysed(franck, { minQuality: quality + 1, allowMultiple: false });
    expect(refused.livenessRuns).toBe(0);
    expect(refused.analysis.faces[0]!.livenessScore).toBeNaN();
    expect(refused.analysis.faces[0]!.icaoWarnings).not.toContain('LIVENESS');
    expect(withoutLiveness(refused.analysis)).toEqual(withoutLiveness(all.analysis));
    // At exactly its quality the face passes.
    expect((await analysed(franck, { minQuality: quality, allowMultiple: false })).livenessRuns).toBe(1);
  });

  it('a picture of several faces: none measured when one face is expected, each that passes when several may be', async () => {
    const group = photo('faceapi/sample1.jpg');
    const all = await analysed(group);
    expect(all.analysis.faces.length).toBeGreaterThanOrEqual(3);
    const one = await analysed(group, { minQuality: 0, allowMultiple: false });
    expect(one.livenessRuns).toBe(0);
    expect(one.analysis.faces.every((f) => Number.isNaN(f.livenessScore))).toBe(true);
    const several = await analysed(group, { minQuality: 0, allowMultiple: true });
    expect(several.livenessRuns).toBe(all.analysis.faces.length);
    expect({ ...several.analysis, timings: undefined }).toEqual({ ...all.analysis, timings: undefined });
  });
});
