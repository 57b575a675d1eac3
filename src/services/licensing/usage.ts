import type { Transaction } from 'kysely';
import { findUsageCount, incrementUsageCounters } from '../../db/repositories/licensing.js';
import type { Database } from '../../db/tables.js';
import type { LicensedOperationType } from '../../licensing/document.js';
import { periodKey } from '../../licensing/periods.js';
import { DomainError } from '../errors.js';
import type { ServiceContext } from '../context.js';
import type { LicenceView, LicensingService } from './licensing-service.js';

/** What counting and prechecking use: the clock and database, and the licence in force. */
interface LicenceUse {
  ctx: ServiceContext;
  licensing: Pick<LicensingService, 'current'>;
}

/** The refusal for a licence that is not in force, or null when operations may run. */
function refusalOf(view: LicenceView): DomainError | null {
  if (view.mode === 'UNLICENSED' || view.state === 'VALID') return null;
  const extras = { licenceId: view.licence?.licenceId, licenceSource: view.source, licenceState: view.state };
  if (view.state === 'EXPIRED' || view.state === 'NOT_YET_VALID')
    return new DomainError('licence-expired', `The operation is refused: ${view.message}`, extras);
  if (view.state === 'UNREACHABLE')
    return new DomainError('service-unavailable', `The licence cannot be checked: ${view.message}`, {
      ...extras,
      component: 'licensing',
    });
  return new DomainError('licence-invalid', `The operation is refused: ${view.message}`, extras);
}

function exhausted(view: LicenceView, type: LicensedOperationType, used: number): DomainError {
  const licence = view.licence!;
  const quota = licence.quotas[type]!;
  return new DomainError(
    'licence-exhausted',
    `The operation is refused: licence ${licence.licenceId} (${licence.licensee}) allows ${quota.limit} ${type} per ${quota.period}, and ${used} are used`,
    {
      licenceId: licence.licenceId,
      licenceSource: view.source,
      operationType: type,
      period: quota.period,
      limit: quota.limit,
      used,
    },
  );
}

/**
 * The cheap check before any extraction work: the licence is in force, and the quota of `type` is not
 * already used up. It is only a shortcut; {@link countUsage} is what enforces, inside the transaction.
 */
export async function precheckLicence(
  services: LicenceUse,
  type: LicensedOperationType,
  modalities: readonly ('FACE' | 'VOICE')[] = ['FACE'],
): Promise<void> {
  const view = await services.licensing.current();
  const refusal = refusalOf(view);
  if (refusal) throw refusal;
  // A licence names the modalities it entitles; an operation on another is refused like an invalid licence.
  const missing = view.licence ? modalities.filter((m) => !view.licence!.modalities.includes(m)) : [];
  if (missing.length) {
    throw new DomainError(
      'licence-invalid',
      `The operation is refused: licence ${view.licence!.licenceId} does not cover ${missing.join(', ')}`,
      {
        licenceId: view.licence!.licenceId,
        licenceSource: view.source,
        licenceState: view.state,
        modalities: missing,
      },
    );
  }
  const quota = view.licence?.quotas[type];
  if (!quota) return;
  const used = await findUsageCount(services.ctx.db, {
    period: periodKey(quota.period, services.ctx.now()),
    operationType: type,
    licenceId: view.licence!.licenceId,
  });
  if (used !== undefined && used >= quota.limit) throw exhausted(view, type, used);
}

/**
 * Count one operation of `type` inside the caller's transaction, and refuse it when the licence is not in
 * force or its quota is used up. The counters are one atomic upsert (`count = count + 1 RETURNING count`):
 * on PostgreSQL concurrent transactions queue on the row, so each sees the count the one before committed.
 * Refusing throws, the caller's transaction rolls back with the increment, and so no count is lost and none
 * goes over. The DAY and MONTH counters are always kept (for getLicensingUsage); TOTAL only when a quota
 * asks for it. Counters are always taken in the same order, so two transactions cannot deadlock on them.
 *
 * @example await ctx.db.transaction().execute(async (trx) => { await countUsage(trx, services, 'ENROLL'); ... })
 */
export async function countUsage(
  trx: Transaction<Database>,
  services: LicenceUse,
  type: LicensedOperationType,
): Promise<void> {
  const view = await services.licensing.current();
  const refusal = refusalOf(view);
  if (refusal) throw refusal;
  const now = services.ctx.now();
  const licenceId = view.licence?.licenceId ?? '';
  const quota = view.licence?.quotas[type];
  const periods = quota?.period === 'TOTAL' ? (['DAY', 'MONTH', 'TOTAL'] as const) : (['DAY', 'MONTH'] as const);
  // One statement for every counter (they are kept whatever the quota), then the quota's judged.
  const keys = periods.map((period) => periodKey(period, now));
  const counts = await incrementUsageCounters(trx, { periods: keys, operationType: type, licenceId });
  if (!quota) return;
  const count = counts.get(periodKey(quota.period, now))!;
  if (count > quota.limit) throw exhausted(view, type, count - 1);
}
