import type { z } from 'zod';
import type { Principal } from '../auth/principal.js';
import { lockCase, markCaseSolved, releaseCase, type CaseRow } from '../../db/repositories/adjudication/cases.js';
import { findDecisionById, findVotesOfCase, insertDecision } from '../../db/repositories/adjudication/decisions.js';
import { setSubjectStatus } from '../../db/repositories/adjudication/related.js';
import type { Queryable } from '../../db/repositories/queryable.js';
import type { SolveAdjudicationRequest } from '../../schemas/adjudication.js';
import { DomainError, conflict, invalid, notFound } from '../errors.js';
import { adjudicatorAccount } from './caller.js';
import { presentDecision } from './present.js';
import { settleEnrolOperations } from './enrol-operation.js';
import type { GalleryService } from '../gallery/gallery-service.js';
import type { SettingsService } from '../settings/settings.js';
import type { ServiceContext } from '../context.js';

type Request = z.output<typeof SolveAdjudicationRequest>;
type Decision = Request['decision'];
type State = 'PENDING' | 'CONFLICTED' | 'SOLVED';

/**
 * `solveAdjudicationCase`: record the caller's decision on a case and move the case on.
 *
 * Who may decide: the adjudicator holding an unexpired lease on the case, or an ADMIN. An ADMIN's decision
 * is final: it settles the case at once (that is how CONFLICTED cases end, and it lets an ADMIN short-cut the
 * queue); it can therefore never meet an earlier decision of the same ADMIN on an open case.
 *
 * Checks, in this order: unknown case 404; already SOLVED 409; the caller already decided on it 409 (one
 * decision per account per case); a CONFLICTED case and a non-ADMIN 403; not the lease holder 403; a
 * `duplicateOfSubjectId` that is not one of the case's candidates 400.
 *
 * Then, in ONE transaction with the case row locked: the decision is inserted; if the decisions disagree
 * the case becomes CONFLICTED; if `adjudication.requiredDecisions` agree (or an ADMIN decided) it is SOLVED
 * with its outcome and solved_at, its probe subject becomes ENROLLED (NOT_DUPLICATE) or REJECTED
 * (DUPLICATE) with a new updated_at, and the ENROLL operation that opened it says so (enrol-operation.ts);
 * otherwise it stays PENDING for the next adjudicator. Every path but
 * SOLVED releases the lease, so the case goes back to the pool (and the caller, having decided, is not
 * handed it again). The other nodes are told of an ENROLLED probe inside that transaction; after the commit it
 * joins this node's gallery.
 */
export async function solveCase(
  services: { ctx: ServiceContext; settings: SettingsService; gallery: GalleryService },
  principal: Principal,
  request: Request,
) {
  const { ctx } = services;
  const me = adjudicatorAccount(principal);
  const isAdmin = principal.role === 'ADMIN';
  const required = await services.settings.get('adjudication.requiredDecisions');

  const result = await services.gallery.transaction(async (trx, changes) => {
    const now = ctx.now();
    const row = await lockCase(trx, request.caseId);
    if (!row) throw notFound(`Adjudication case ${request.caseId}`);
    if (row.status === 'SOLVED') throw conflict(`Adjudication case ${row.id} is already solved (${row.outcome})`);
    const earlier = await findVotesOfCase(trx, row.id);
    if (earlier.some((d) => d.account_id === me))
      throw conflict(`You have already decided on adjudication case ${row.id}; one decision per adjudicator`);
    if (!isAdmin) assertMayDecide(row, me, now);
    const duplicateOf =
      request.decision === 'DUPLICATE' ? duplicateOfCandidate(row, request.duplicateOfSubjectId) : null;

    const insertedId = await insertDecision(trx, {
      case_id: row.id,
      account_id: me,
      decision: request.decision,
      duplicate_of_subject_id: duplicateOf,
      comment: request.comment,
      created_at: now,
    });
    const decisions = [...earlier.map((d) => d.decision), request.decision];
    const state = nextState(decisions, required, isAdmin);
    let probe: { id: number; subject_id: string } | undefined;
    if (state === 'SOLVED') {
      probe = await settle(trx, row, request.decision, now);
      // The newly ENROLLED probe joins every node's gallery.
      if (probe && request.decision === 'NOT_DUPLICATE') changes.put(probe.id);
    } else {
      await releaseCase(trx, row.id, state);
    }
    const decision = presentDecision((await findDecisionById(trx, insertedId))!);
    return { decision, state, probe, ...(state === 'SOLVED' ? { outcome: request.decision } : {}) };
  });

  ctx.log.info('adjudication decision recorded', { caseId: request.caseId, accountId: me, state: result.state });
  const { probe: _probe, ...answer } = result;
  return answer;
}

function assertMayDecide(row: CaseRow, me: number, now: Date) {
  if (row.status === 'CONFLICTED') {
    throw new DomainError(
      'forbidden',
      `Adjudication case ${row.id} is CONFLICTED: the decisions disagree and an ADMIN settles it`,
    );
  }
  const leased = row.assigned_to === me && row.lease_expires_at !== null && row.lease_expires_at > now;
  if (!leased) {
    throw new DomainError(
      'forbidden',
      `Adjudication case ${row.id} is not leased to you; take it with getOncomingAdjudicationPending first`,
    );
  }
}

/** The candidate a DUPLICATE decision names: the one asked for (it must be a candidate), else the best. */
function duplicateOfCandidate(row: CaseRow, asked: string | undefined): string | null {
  const candidates = row.candidates;
  if (asked === undefined) return candidates[0]?.subjectId ?? null;
  if (!candidates.some((c) => c.subjectId === asked)) {
    throw invalid(
      'body.duplicateOfSubjectId',
      `'${asked}' is not a candidate of case ${row.id} (${candidates.map((c) => c.subjectId).join(', ') || 'none'})`,
    );
  }
  return asked;
}

/** Where the decisions so far (the new one last) leave the case. */
export function nextState(decisions: readonly Decision[], required: number, byAdmin: boolean): State {
  if (byAdmin) return 'SOLVED';
  const last = decisions[decisions.length - 1];
  if (decisions.some((d) => d !== last)) return 'CONFLICTED';
  return decisions.length >= required ? 'SOLVED' : 'PENDING';
}

/** Close the case and give its probe subject its final status, inside the deciding transaction. */
async function settle(trx: Queryable, row: CaseRow, outcome: Decision, now: Date) {
  await markCaseSolved(trx, row.id, outcome, now);
  await settleEnrolOperations(trx, [row.operation_uuid], outcome === 'NOT_DUPLICATE' ? 'ENROLLED' : 'REJECTED');
  return setSubjectStatus(trx, row.subject_id, outcome === 'NOT_DUPLICATE' ? 'ENROLLED' : 'REJECTED', now);
}
