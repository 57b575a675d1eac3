import type { QuotaPeriod } from './document.js';

/**
 * The key of the usage counter a moment falls in: `DAY:2026-11-26`, `MONTH:2026-11` or `TOTAL`, in UTC so
 * that every node of a cluster counts into the same rows whatever its time zone.
 */
export function periodKey(period: QuotaPeriod, at: Date): string {
  const iso = at.toISOString();
  if (period === 'DAY') return `DAY:${iso.slice(0, 10)}`;
  if (period === 'MONTH') return `MONTH:${iso.slice(0, 7)}`;
  return 'TOTAL';
}

/** When the period of a `DAY:`/`MONTH:` key starts, or null for `TOTAL` and foreign keys. */
export function periodStartOf(key: string): Date | null {
  const m = /^(DAY|MONTH):(\d{4}-\d{2}(?:-\d{2})?)$/.exec(key);
  if (!m) return null;
  return new Date(m[1] === 'DAY' ? `${m[2]}T00:00:00Z` : `${m[2]}-01T00:00:00Z`);
}
