import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExtractor } from '../../src/extraction/index.js';
import type { Extractor } from '../../src/extraction/extractor.js';
import { CaptureSession } from '../../src/services/capture/capture-session.js';
import type { CaptureMedia } from '../../src/services/capture/capture-types.js';
import { InitParams } from '../../src/schemas/gateway-init.js';
import { adminAuth, bootForTest } from '../support/databases.js';
import { photo } from './helpers.js';

/**
 * Samples are analysed once (issue 34, "analyse, then store"; issue 33's frames analysed twice): the real
 * worker pool, every face analysis it is asked for counted, behind the service. An HTTP enrolment of two photos
 * runs the face models twice; a capture runs them once per frame it analyses and never again on the frames it
 * chose for its enrolment or verification.
 */
let pool: Extractor;
let booted: Awaited<ReturnType<typeof bootForTest>>;
let faceAnalyses = 0;
/** Faces the pool was asked to embed alone (`embedFaces`: the frames a capture kept, no detection again). */
let faceEmbeddings = 0;

/** The real pool as the service sees it, counting its face analyses (close() leaves the pool to afterAll). */
const counted = (): Extractor => ({
  get templateVersion() {
    return pool.templateVersion;
  },
  get voiceTemplateVersion() {
    return pool.voiceTemplateVersion;
  },
  analyseFace: (bytes, options) => {
    if (options?.embedFaces) faceEmbeddings += options.embedFaces.length;
    else faceAnalyses += 1;
    return pool.analyseFace(bytes, options);
  },
  analyseVoice: (bytes, options) => pool.analyseVoice(bytes, options),
  renderTokenImage: (bytes, options) => pool.renderTokenImage(bytes, options),
  stats: () => pool.stats(),
  close: async () => {},
});

beforeAll(async () => {
  pool = await createExtractor({ mode: 'worker-threads', size: 1 });
  // Warmed outside the count: a cold first analysis under load outlasts a capture's idle limit.
  await pool.analyseFace(photo('labelled/franck/franck_02159.jpg'), { checks: true });
  booted = await bootForTest('pglite', {}, { createExtractor: async () => counted() });
});
afterAll(async () => {
  await booted?.close();
  await pool?.close();
});

const admin = {
  principal: { accountId: null, username: 'admin', role: 'ADMIN' as const, via: 'basic' as const },
  surface: 'admin' as const,
};

/** `count` copies of one photo, as the decoder hands frames over. */
const frames = (bytes: Uint8Array, count: number): CaptureMedia => ({
  async *frames() {
    for (let i = 0; i < count; i++) yield Buffer.from(bytes);
  },
  release: async () => {},
});

/** Run a capture and give its outcome, its frames analysed, and the face analyses the pool ran meanwhile. */
async function capture(params: Record<string, unknown>, bytes: Uint8Array) {
  const [before, embeddedBefore] = [faceAnalyses, faceEmbeddings];
  const session = new CaptureSession(booted.services, InitParams.parse(params), admin, frames(bytes, 6));
  session.start();
  await session.finished;
  const { framesAnalysed: analysed } = session.metrics;
  return { result: session.result!, analysed, ran: faceAnalyses - before, embedded: faceEmbeddings - embeddedBefore };
}

describe('samples analysed once', () => {
  it('an HTTP enrolment of two photos runs the face models exactly twice', async () => {
    const [before, embeddedBefore] = [faceAnalyses, faceEmbeddings];
    const faces = ['labelled/cage/cage.jpg', 'labelled/cage/cage2_crop.jpg'].map((p) => ({
      image: Buffer.from(photo(p)).toString('base64'),
    }));
    const response = await booted.app.request('/admin/subjects/create', {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json' },
      body: JSON.stringify({ subjectId: 'once-http', faces }),
    });
    expect(response.status, await response.clone().text()).toBe(201);
    expect(await response.json()).toMatchObject({ subjectId: 'once-http', status: 'ENROLLED' });
    expect(faceAnalyses - before).toBe(2);
    expect(faceEmbeddings - embeddedBefore).toBe(0);
  }, 120_000);

  it('a capture ENROLL, then VERIFY, runs the models once per analysed frame and only the embedding on the chosen ones', async () => {
    const params = { kind: 'FV', subjectId: 'once-capture', selectFrames: 2, livenessFrames: 2 };
    const enrolled = await capture({ ...params, purpose: 'ENROLL' }, photo('labelled/franck/franck_02159.jpg'));
    expect(enrolled.result, JSON.stringify(enrolled.result)).toMatchObject({
      status: 'SUCCESS',
      subjectStatus: 'ENROLLED',
    });
    expect(enrolled.analysed).toBeGreaterThanOrEqual(2);
    expect(enrolled.ran).toBe(enrolled.analysed);
    // Frames are judged without their embeddings; the two chosen have theirs made, each face once.
    expect(enrolled.embedded).toBe(2);
    // The two chosen frames are the subject's samples, stored from the capture's own analyses.
    const samples = await booted.services.ctx.db
      .selectFrom('face_samples')
      .select('quality')
      .where('operation_uuid', '=', enrolled.result.operationUuid!)
      .execute();
    expect(samples).toHaveLength(2);

    const verified = await capture({ ...params, purpose: 'VERIFY' }, photo('labelled/franck/franck_02221.jpg'));
    expect(verified.result, JSON.stringify(verified.result)).toMatchObject({
      status: 'SUCCESS',
      score: expect.any(Number),
    });
    expect(verified.analysed).toBeGreaterThanOrEqual(2);
    expect(verified.ran).toBe(verified.analysed);
    expect(verified.embedded).toBe(2);
  }, 180_000);
});
