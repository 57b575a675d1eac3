import type { Principal } from '../auth/principal.js';
import {
  findLeaseHeldBy,
  leaseCase,
  lockNextOpenCaseFor,
  type CaseRow,
} from '../../db/repositories/adjudication/cases.js';
import { lockAdjudicatorAccount } from '../../db/repositories/adjudication/related.js';
import { adjudicatorAccount } from './caller.js';
import { pendingReview } from './review.js';
import type { SettingsService } from '../settings/settings.js';
import type { ServiceContext } from '../context.js';
import type { ExtractorProvider } from '../biometrics/extractor-provider.js';

/**
 * `getOncomingAdjudicationPending`: the case the caller should work on now, leased to them for
 * `adjudication.leaseSeconds`.
 *
 * - A caller who holds an unexpired lease gets that same case back (the lease is not extended, so nobody can
 *   keep a case by polling).
 * - Otherwise the oldest PENDING case that is unassigned or whose lease ran out, and on which the caller has
 *   not decided yet (with adjudication.requiredDecisions > 1 the next decision must come from someone else),
 *   is assigned to the caller.
 * - CONFLICTED cases are not handed out: they wait for an ADMIN, who finds them by listing status CONFLICTED.
 *
 * Concurrency: in one transaction, `SELECT id ... ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED` locks
 * the oldest eligible row that no other transaction holds (PostgreSQL re-checks the WHERE on a row another
 * transaction leased and committed meanwhile, which then no longer qualifies), and `UPDATE ... RETURNING *`
 * leases it. Two statements on purpose: folded into `UPDATE ... WHERE id IN (SELECT ... LIMIT 1 FOR UPDATE
 * SKIP LOCKED)` PostgreSQL may evaluate the sub-select once per row and lease every eligible case at once. The caller's account row is locked
 * first so that one adjudicator's simultaneous calls are served one after the other and cannot collect two
 * leases. PGlite runs one connection at a time, so the same SQL is trivially safe there.
 *
 * @returns the case with its review material, or null when nothing waits (the handler answers 204).
 */
export async function takeOncoming(
  services: { ctx: ServiceContext; settings: SettingsService; extractors: ExtractorProvider },
  principal: Principal,
) {
  const { ctx } = services;
  const me = adjudicatorAccount(principal);
  const leaseSeconds = await services.settings.get('adjudication.leaseSeconds');
  const row: CaseRow | undefined = await ctx.db.transaction().execute(async (trx) => {
    const now = ctx.now();
    await lockAdjudicatorAccount(trx, me);
    const held = await findLeaseHeldBy(trx, me, now);
    if (held) return held;
    const next = await lockNextOpenCaseFor(trx, me, now);
    if (next === undefined) return undefined;
    // The row stays locked by this transaction until it commits, so nobody else can lease it in between.
    return leaseCase(trx, next, me, now, new Date(now.getTime() + leaseSeconds * 1000));
  });
  if (!row) return null;
  ctx.log.debug('adjudication case handed out', { caseId: row.id, accountId: me });
  return pendingReview(services, row);
}
