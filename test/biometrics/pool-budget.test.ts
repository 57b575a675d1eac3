// The pool weighs each job before queueing it (src/extraction/node-pool-cost.ts), and a decode past the budget its
// weight sets is ended where it runs: here a real decode, the worker terminated inside the decoder (freeing its
// core at once) and replaced. test/http/hostile-uploads.test.ts shows the same through HTTP with a decode that
// never ends, and on its two-worker pool that one account's heavy jobs never take the last free worker. Asserted
// on the pool's own counters, never on wall time: the bound in seconds is `npm run bench -- hostile`'s to measure.
import { describe, expect, it } from 'vitest';
import { createNodePoolExtractor } from '../../src/extraction/node-pool.js';
import { flatPng } from '../support/hostile-png.js';

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
