import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CaptureWriter, PROGRESS_WRITE_MS } from './capture-writer.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} } as never;

/**
 * The capture row's writes (capture-writer.ts): progress coming at the frame rate is written about once a
 * second, never later than {@link PROGRESS_WRITE_MS} after it happened (what another node's reader may lag);
 * a change of state at once.
 */
describe('CaptureWriter', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  function writer(progressWrites?: boolean, fail = () => false) {
    const writes: number[] = [];
    const w = new CaptureWriter({
      write: async () => {
        if (fail()) throw new Error('database unreachable');
        writes.push(Date.now());
        return true;
      },
      settledElsewhere: () => {},
      log: silent,
      ...(progressWrites === undefined ? {} : { progressWrites }),
    });
    return { w, writes };
  }

  it('writes progress at 5 changes a second about once a second, each change within the bound', async () => {
    const { w, writes } = writer();
    w.changed(true); // the row made: at once
    await vi.advanceTimersByTimeAsync(0);
    expect(writes).toHaveLength(1);
    const changes: number[] = [];
    for (let i = 0; i < 15; i++) {
      changes.push(Date.now());
      w.changed(false);
      await vi.advanceTimersByTimeAsync(200);
    }
    await vi.advanceTimersByTimeAsync(PROGRESS_WRITE_MS);
    // 15 changes over 3 s: 3 or 4 writes, not one per change (15 at 200 ms before).
    expect(writes.length - 1).toBeGreaterThanOrEqual(3);
    expect(writes.length - 1).toBeLessThanOrEqual(4);
    const lags = changes.map((at) => writes.find((written) => written >= at)! - at);
    expect(Math.max(...lags)).toBeLessThanOrEqual(PROGRESS_WRITE_MS);
  });

  it('writes a change of state at once, progress waiting before it included', async () => {
    const { w, writes } = writer();
    w.changed(true);
    await vi.advanceTimersByTimeAsync(0);
    w.changed(false);
    await vi.advanceTimersByTimeAsync(100);
    expect(writes).toHaveLength(1);
    w.changed(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(writes).toHaveLength(2);
    // Nothing left: the pending progress went with it.
    await vi.advanceTimersByTimeAsync(2 * PROGRESS_WRITE_MS);
    expect(writes).toHaveLength(2);
    expect(w.idle).toBe(true);
  });

  it('flushed() writes the progress gathered without waiting for the window', async () => {
    const { w, writes } = writer();
    w.changed(true);
    await vi.advanceTimersByTimeAsync(0);
    w.changed(false);
    const flushed = w.flushed();
    await vi.advanceTimersByTimeAsync(0);
    await flushed;
    expect(writes).toEqual([writes[0], writes[0]]);
    expect(w.idle).toBe(true);
  });

  it('without progressWrites (one node), writes progress only with the next change of state or a flush', async () => {
    const { w, writes } = writer(false);
    w.changed(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(writes).toHaveLength(1);
    for (let i = 0; i < 15; i++) {
      w.changed(false);
      await vi.advanceTimersByTimeAsync(200);
    }
    await vi.advanceTimersByTimeAsync(5 * PROGRESS_WRITE_MS);
    // 15 changes over 3 s and 5 s more: nothing written, the changes still pending.
    expect(writes).toHaveLength(1);
    expect(w.idle).toBe(false);
    w.changed(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(writes).toHaveLength(2);
    expect(w.idle).toBe(true);
    w.changed(false);
    await w.flushed();
    expect(writes).toHaveLength(3);
    expect(w.idle).toBe(true);
  });

  it('without progressWrites, still tries a failed write again', async () => {
    let failing = true;
    const { w, writes } = writer(false, () => failing);
    w.changed(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(writes).toHaveLength(0);
    failing = false;
    await vi.advanceTimersByTimeAsync(1000);
    expect(writes).toHaveLength(1);
    expect(w.idle).toBe(true);
  });
});
