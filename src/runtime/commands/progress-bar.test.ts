import { describe, expect, it } from 'vitest';
import { progressBar } from './progress-bar.js';

/** The CLI's progress bar: one redrawn line on a terminal, a line per tenth elsewhere. */
describe('progressBar', () => {
  const sink = (isTTY: boolean) => {
    const out: string[] = [];
    return { out, stream: { isTTY, columns: 80, write: (t: string) => out.push(t) } };
  };

  it('redraws one line with carriage returns on a terminal and ends it on finish', () => {
    const { out, stream } = sink(true);
    const bar = progressBar(stream, { width: 10, minIntervalMs: 0 });
    bar.update({ done: 0, total: 4, failed: 0 });
    bar.update({ done: 2, total: 4, failed: 1, label: 'alice' });
    bar.update({ done: 4, total: 4, failed: 1, label: 'bob' });
    bar.finish();
    expect(out.every((t) => t.startsWith('\r'))).toBe(true);
    expect(out[1]).toContain('[#####-----] 2/4  50% failed 1  alice');
    expect(out.at(-1)).toMatch(/\[##########\] 4\/4 100% failed 1 {2}bob\x1b\[K\n$/);
  });

  it('writes plain lines, one per tenth, when the stream is not a terminal', () => {
    const { out, stream } = sink(false);
    const bar = progressBar(stream, { width: 10 });
    for (let done = 0; done <= 100; done++) bar.update({ done, total: 100, failed: 0 });
    bar.finish();
    expect(out.filter((t) => t.includes('/100'))).toHaveLength(11);
    expect(out.some((t) => t.includes('\r'))).toBe(false);
  });

  it('shows an empty run as complete', () => {
    const { out, stream } = sink(false);
    progressBar(stream, { width: 4 }).update({ done: 0, total: 0, failed: 0 });
    expect(out[0]).toBe('[####] 0/0 100%\n');
  });
});
