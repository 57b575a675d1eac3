import { describe, expect, it } from 'vitest';
import { nextState } from './solve.js';

/** Where a case goes after each decision: the agreement rule without a database. */
describe('nextState', () => {
  it('solves when the required number of decisions agree', () => {
    expect(nextState(['DUPLICATE'], 1, false)).toBe('SOLVED');
    expect(nextState(['NOT_DUPLICATE'], 2, false)).toBe('PENDING');
    expect(nextState(['NOT_DUPLICATE', 'NOT_DUPLICATE'], 2, false)).toBe('SOLVED');
    expect(nextState(['DUPLICATE', 'DUPLICATE'], 3, false)).toBe('PENDING');
  });

  it('marks any disagreement CONFLICTED, even when enough decisions agree', () => {
    expect(nextState(['NOT_DUPLICATE', 'DUPLICATE'], 2, false)).toBe('CONFLICTED');
    expect(nextState(['DUPLICATE', 'NOT_DUPLICATE', 'NOT_DUPLICATE'], 2, false)).toBe('CONFLICTED');
  });

  it('lets an ADMIN decision settle the case whatever came before', () => {
    expect(nextState(['NOT_DUPLICATE', 'DUPLICATE', 'DUPLICATE'], 2, true)).toBe('SOLVED');
    expect(nextState(['NOT_DUPLICATE'], 5, true)).toBe('SOLVED');
  });
});
