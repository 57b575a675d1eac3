import { findCaseState } from '../../db/repositories/adjudication/cases.js';
import { notFound } from '../errors.js';
import { decisionsOfCases } from './present.js';
import type { SettingsService } from '../settings/settings.js';
import type { ServiceContext } from '../context.js';

/**
 * `getAdjudicationAdjudicatorDecisions`: every decision recorded on one case, pending, conflicted or solved,
 * with where the case stands and how many agreeing decisions the current settings require.
 */
export async function decisionsOfCase(services: { ctx: ServiceContext; settings: SettingsService }, caseId: number) {
  const { ctx } = services;
  const row = await findCaseState(ctx.db, caseId);
  if (!row) throw notFound(`Adjudication case ${caseId}`);
  const decisions = (await decisionsOfCases(ctx.db, [row.id])).get(row.id) ?? [];
  return {
    caseId: row.id,
    state: row.status,
    ...(row.status === 'SOLVED' && row.outcome ? { outcome: row.outcome } : {}),
    requiredDecisions: await services.settings.get('adjudication.requiredDecisions'),
    decisions,
  };
}
