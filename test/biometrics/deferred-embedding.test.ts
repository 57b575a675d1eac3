import { beforeAll, describe, expect, it } from 'vitest';
import { analyseImage } from '../../src/biometrics/face/pipeline.js';
import type { AnalyseOptions, ImageAnalysis } from '../../src/biometrics/face/analysis.js';
import type { ModelRunner } from '../../src/biometrics/face/runner.js';
import { countingRunner, getRunner, photo } from './helpers.js';

/**
 * A live capture judges its frames without their embeddings (`embedding: false`) and has them made for the frames
 * it keeps (`embedFaces`, issue 33): the two together must give what one analysis gives, bit for bit, and the
 * second must run the embedding model alone, not detection or any other model again.
 */
let runner: ModelRunner;

beforeAll(async () => {
  runner = await getRunner();
});

/** A capture's per-frame measures for a VERIFY with passive liveness (frameMeasures). */
const CAPTURE: AnalyseOptions = { checks: true, attributes: false, liveness: true };

async function analysedTwoWays(bytes: Uint8Array) {
  const whole = await analyseImage(runner, bytes, CAPTURE);
  const judging = countingRunner(runner);
  const judged = await analyseImage(judging.runner, bytes, { ...CAPTURE, embedding: false });
  const embedding = countingRunner(runner);
  const embedded = await analyseImage(embedding.runner, bytes, { embedFaces: judged.faces.map((f) => f.landmarks) });
  return { whole, judged, judgedRan: judging.ran, embedded, embeddedRan: embedding.ran };
}

/** The analysis without its faces' embeddings and timings: what must not change when the embedding waits. */
const measured = (a: ImageAnalysis) => ({
  ...a,
  timings: undefined,
  faces: a.faces.map(({ embedding: _e, embeddingNorm: _n, ...rest }) => rest),
});

describe('embedding deferred to the frames kept', () => {
  it('one face: the same measures without the embedding, then the same embedding from the landmarks alone', async () => {
    const { whole, judged, judgedRan, embedded, embeddedRan } = await analysedTwoWays(
      photo('labelled/franck/franck_02159.jpg'),
    );
    expect(whole.faces).toHaveLength(1);
    expect(measured(judged)).toEqual(measured(whole));
    expect(judged.faces[0]!.embedding).toHaveLength(0);
    expect(judged.faces[0]!.embeddingNorm).toBeNaN();
    expect(judgedRan).not.toContain('fr_feature');
    expect(new Set(judgedRan)).toEqual(new Set(['fr_detect', 'fr_landmark', 'fr_pose', 'fr_eye', 'fr_liveness']));

    expect(embeddedRan).toEqual(['fr_feature']);
    expect(embedded.faces).toEqual([]);
    expect(embedded.embeddings).toHaveLength(1);
    expect(embedded.embeddings![0]!.embedding).toHaveLength(512);
    expect(Array.from(embedded.embeddings![0]!.embedding)).toEqual(Array.from(whole.faces[0]!.embedding));
    expect(embedded.embeddings![0]!.embeddingNorm).toBe(whole.faces[0]!.embeddingNorm);
  });

  it('every face of a group photo, in the order asked, bit for bit', async () => {
    const { whole, embedded, embeddedRan } = await analysedTwoWays(photo('faceapi/sample1.jpg'));
    expect(whole.faces.length).toBeGreaterThanOrEqual(3);
    expect(embeddedRan).toEqual(whole.faces.map(() => 'fr_feature'));
    expect(embedded.embeddings!.map((e) => Array.from(e.embedding))).toEqual(
      whole.faces.map((f) => Array.from(f.embedding)),
    );
  });

  it('a face to embed without its 68 landmarks is refused, no model run', async () => {
    const bytes = photo('labelled/franck/franck_02159.jpg');
    const counting = countingRunner(runner);
    await expect(analyseImage(counting.runner, bytes, { embedFaces: [[[10, 10]]] })).rejects.toMatchObject({
      code: 'EXTRACTION_FAILED',
    });
    expect(counting.ran).toEqual([]);
  });
});
