import { describe, expect, it } from 'vitest';
import { createLogger, isoNow } from './logger.js';

describe('isoNow', () => {
  it('writes any instant as toISOString does, in order, out of order and across minutes, days and years', () => {
    const instants = [
      0,
      1,
      999,
      1000,
      59_999,
      60_000,
      60_001,
      Date.UTC(2026, 10, 26, 23, 59, 59, 999),
      Date.UTC(2026, 10, 27, 0, 0, 0, 0),
      Date.UTC(2024, 1, 29, 12, 30, 5, 7),
      Date.UTC(1999, 11, 31, 23, 59, 59, 990),
      Date.UTC(2000, 0, 1),
    ];
    // A fixed pseudo-random spread over 1970-2096, so a failure can be replayed.
    for (let i = 0, x = 12345; i < 20_000; i++) instants.push((x = (x * 1_103_515_245 + 12_345) % 2 ** 31) * 1_900);
    const inOrder = [...instants].sort((a, b) => a - b);
    // Several instants of one minute in a row (the kept minute is used), then the clock set back.
    for (const t of [...instants, ...inOrder, ...inOrder.reverse()])
      expect(isoNow(t), String(t)).toBe(new Date(t).toISOString());
  });

  it("is the log line's time", () => {
    const lines: string[] = [];
    const before = Date.now();
    createLogger('info', (line) => lines.push(line)).info('hello', { n: 1 });
    const time = Date.parse(JSON.parse(lines[0]!).time as string);
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(Date.now());
  });
});
