import { sumUsageByPeriod } from '../../db/repositories/licensing.js';
import type { LicensedOperationType } from '../../licensing/document.js';
import { periodStartOf } from '../../licensing/periods.js';
import { DomainError } from '../errors.js';
import { modeOf } from './licence-terms.js';
import type { LicensingService } from './licensing-service.js';
import type { ServiceContext } from '../context.js';

/**
 * getLicensingUsage: counts per operation type and DAY or MONTH period, within [from, to] (by default from the
 * start of this month until now), each with the licence's limit when its quota is of that period.
 */
export async function usageReport(
  services: { ctx: ServiceContext; licensing: LicensingService },
  query: { from?: Date; to?: Date; period: 'DAY' | 'MONTH'; operation?: LicensedOperationType },
) {
  const view = await services.licensing.current();
  const now = services.ctx.now();
  const to = query.to ?? now;
  const from = query.from ?? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  if (from > to)
    throw new DomainError('validation', 'query.from: must not be after query.to', {
      errors: [{ field: 'query.from', message: 'must not be after query.to' }],
    });
  const rows = await sumUsageByPeriod(services.ctx.db, query.period, query.operation);
  // A period counts when it overlaps the window: it starts before `to` and its start is not before from's period.
  const fromKeyStart =
    query.period === 'DAY'
      ? Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate())
      : Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), 1);
  const entries = rows
    .map((r) => ({
      operation: r.operation_type as LicensedOperationType,
      start: periodStartOf(r.period),
      count: r.count,
    }))
    .filter((e) => e.start && e.start.getTime() >= fromKeyStart && e.start.getTime() <= to.getTime())
    .map((e) => {
      const quota = view.licence?.quotas[e.operation];
      return {
        operation: e.operation,
        periodStart: e.start!.toISOString(),
        count: e.count,
        ...(quota?.period === query.period ? { limit: quota.limit } : {}),
      };
    });
  const totals = new Map<LicensedOperationType, number>();
  for (const e of entries) totals.set(e.operation, (totals.get(e.operation) ?? 0) + e.count);
  return {
    licensing: modeOf(view),
    from: from.toISOString(),
    to: to.toISOString(),
    period: query.period,
    entries,
    totals: [...totals].map(([operation, count]) => ({ operation, count })),
  };
}
