import { describe, expect, it } from 'vitest';
import { JoinedReads } from './joined-reads.js';

/** A statement the test ends by hand; `sent` counts the statements started. */
function statements() {
  const started: { asked: readonly string[]; resolve: (v: string) => void; reject: (e: unknown) => void }[] = [];
  const start = (asked: readonly string[]) =>
    new Promise<string>((resolve, reject) => {
      started.push({ asked, resolve, reject });
    });
  return { started, start };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('JoinedReads', () => {
  it('starts a lone read at once and forgets it when it ends', async () => {
    const reads = new JoinedReads();
    const { started, start } = statements();
    const answer = reads.run('k', 'v', start);
    expect(started).toHaveLength(1);
    started[0]!.resolve('a');
    expect(await answer).toBe('a');
    await tick();
    expect(reads.size).toBe(0);
  });

  it('never gives a read the answer of a statement sent before it arrived', async () => {
    const reads = new JoinedReads();
    const { started, start } = statements();
    const first = reads.run('k', 'v', start);
    // Three reads arrive while the first statement runs: none is sent yet, and none gets the first's answer.
    const joined = [reads.run('k', 'v', start), reads.run('k', 'v', start), reads.run('k', 'v', start)];
    expect(started).toHaveLength(1);
    started[0]!.resolve('before');
    expect(await first).toBe('before');
    await tick();
    // One statement for the three, started after they all arrived.
    expect(started).toHaveLength(2);
    // A read arriving now, with that statement sent, waits for a statement of its own.
    const later = reads.run('k', 'v', start);
    started[1]!.resolve('after');
    expect(await Promise.all(joined)).toEqual(['after', 'after', 'after']);
    await tick();
    expect(started).toHaveLength(3);
    started[2]!.resolve('latest');
    expect(await later).toBe('latest');
    await tick();
    expect(reads.size).toBe(0);
  });

  it('gathers what the reads arriving meanwhile ask into the next statement', async () => {
    const reads = new JoinedReads();
    const { started, start } = statements();
    const first = reads.run('k', 'a', start);
    const gathered = [reads.run('k', 'b', start), reads.run('k', 'c', start)];
    expect(started.map((s) => s.asked)).toEqual([['a']]);
    started[0]!.resolve('A');
    await first;
    await tick();
    expect(started.map((s) => s.asked)).toEqual([['a'], ['b', 'c']]);
    started[1]!.resolve('BC');
    expect(await Promise.all(gathered)).toEqual(['BC', 'BC']);
  });

  it('keeps different reads apart', async () => {
    const reads = new JoinedReads();
    const { started, start } = statements();
    const a = reads.run('a', 'v', start);
    const b = reads.run('b', 'v', start);
    expect(started).toHaveLength(2);
    started[1]!.resolve('B');
    started[0]!.resolve('A');
    expect([await a, await b]).toEqual(['A', 'B']);
  });

  it('gives a failure to the reads that shared the statement and starts afresh for the next', async () => {
    const reads = new JoinedReads();
    const { started, start } = statements();
    const first = reads.run('k', 'v', start);
    const joined = [reads.run('k', 'v', start), reads.run('k', 'v', start)];
    started[0]!.reject(new Error('first failed'));
    await expect(first).rejects.toThrow('first failed');
    await tick();
    started[1]!.reject(new Error('shared failed'));
    for (const read of joined) await expect(read).rejects.toThrow('shared failed');
    await tick();
    expect(reads.size).toBe(0);
    const next = reads.run('k', 'v', start);
    started[2]!.resolve('ok');
    expect(await next).toBe('ok');
  });

  it('starts the waiting statement when the running one fails', async () => {
    const reads = new JoinedReads();
    const { started, start } = statements();
    void reads.run('k', 'v', start).catch(() => {});
    const joined = reads.run('k', 'v', start);
    started[0]!.reject(new Error('gone'));
    await tick();
    expect(started).toHaveLength(2);
    started[1]!.resolve('fresh');
    expect(await joined).toBe('fresh');
  });
});
