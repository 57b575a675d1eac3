import { CountSchema, IdsBodySchema, z } from '../schemas/common.js';
import {
  AdjudicationAdjudicatorDecision, AdjudicationPending, AdjudicationPendingOperation, AdjudicationSolved, AdjudicationSolvedOperation,
  AdjudicatorDecision, CaseIdQuery, ClearAdjudicationsResult, DecisionsCountQuery, DecisionsOfCaseQuery, DecisionsQuery, PendingCountQuery,
  PendingQuery, SolveAdjudicationRequest, SolveAdjudicationResult, SolvedCountQuery, SolvedQuery,
} from '../schemas/adjudication.js';
import { DeletedCount } from '../schemas/primitives.js';
import { defineOperation } from './types.js';

const area = 'Adjudication';
const adminRoot = ['admin', 'root'] as const;
const admin = ['admin'] as const;
/** On the root surface, adjudication lives under /adjudicator and needs ADJUDICATOR. */
const rootPrefix = '/adjudicator' as const;
const missing = 'adjudication (issue 5)';

/** Seed section 4.2: adjudication of possible duplicates, on admin and (under /adjudicator) root. */
export const adjudicationOperations = [
  defineOperation({
    id: 'getAdjudicationPending', method: 'get', path: '/adjudication/pending', surfaces: adminRoot, rootPrefix, area,
    summary: 'Gets the oncoming adjudication',
    description: 'One pending case by its identifier, with the operation and samples for side-by-side review.',
    request: { query: CaseIdQuery },
    response: { description: 'The pending case', schema: AdjudicationPendingOperation },
    missing,
  }),
  defineOperation({
    id: 'getOncomingAdjudicationPending', method: 'get', path: '/adjudication/pending/oncoming', surfaces: adminRoot, rootPrefix, area,
    summary: 'Gets the oncoming adjudication',
    description:
      'Hands the caller the oldest unassigned case and leases it to them (adjudication.leaseSeconds); two adjudicators never get the same case. A caller that already holds a lease gets that case again. 404 when no case waits.',
    response: { description: 'The case now leased to the caller', schema: AdjudicationPendingOperation },
    missing,
  }),
  defineOperation({
    id: 'getAdjudicationsPending', method: 'get', path: '/adjudication/pending/list', surfaces: adminRoot, rootPrefix, area,
    summary: 'Lists pending adjudications according to a filter',
    request: { query: PendingQuery },
    response: { description: 'A page of pending cases', schema: z.array(AdjudicationPending) },
    missing,
  }),
  defineOperation({
    id: 'getAdjudicationsPendingCount', method: 'get', path: '/adjudication/pending/list/count', surfaces: adminRoot, rootPrefix, area,
    summary: 'Counts pending adjudications',
    request: { query: PendingCountQuery },
    response: { description: 'How many pending cases match', schema: CountSchema },
    missing,
  }),
  defineOperation({
    id: 'getAdjudicationSolved', method: 'get', path: '/adjudication/solved', surfaces: adminRoot, rootPrefix, area,
    summary: 'Gets a solved adjudication',
    request: { query: CaseIdQuery },
    response: { description: 'The solved case', schema: AdjudicationSolvedOperation },
    missing,
  }),
  defineOperation({
    id: 'getAdjudicationsSolved', method: 'get', path: '/adjudication/solved/list', surfaces: admin, area,
    summary: 'Lists solved adjudications according to a filter',
    request: { query: SolvedQuery },
    response: { description: 'A page of solved cases', schema: z.array(AdjudicationSolved) },
    missing,
  }),
  defineOperation({
    id: 'getAdjudicationsSolvedCount', method: 'get', path: '/adjudication/solved/list/count', surfaces: admin, area,
    summary: 'Counts solved adjudications',
    request: { query: SolvedCountQuery },
    response: { description: 'How many solved cases match', schema: CountSchema },
    missing,
  }),
  defineOperation({
    id: 'deleteAdjudicationsSolved', method: 'delete', path: '/adjudication/solved/delete', surfaces: admin, area,
    summary: 'Deletes a list of solved adjudications',
    description: 'All or nothing, with the decisions of those cases.',
    request: { body: IdsBodySchema },
    response: { description: 'How many cases were deleted', schema: DeletedCount },
    missing,
  }),
  defineOperation({
    id: 'clearAdjudicationSolvedDb', method: 'delete', path: '/adjudication/solved/clear-db', surfaces: admin, area,
    summary: 'Clears the solved-case store; also clears the adjudicator decisions belonging to those cases',
    response: { description: 'What was removed', schema: ClearAdjudicationsResult },
    missing,
  }),
  defineOperation({
    id: 'clearAdjudicationsPendingDb', method: 'delete', path: '/adjudication/pending/clear-db', surfaces: admin, area,
    summary: 'Clears the pending-case store; also clears the adjudicator decisions belonging to those cases',
    description: 'The probe subjects of the cleared cases stay PENDING_ADJUDICATION.',
    response: { description: 'What was removed', schema: ClearAdjudicationsResult },
    missing,
  }),
  defineOperation({
    id: 'getAdjudicatorDecisions', method: 'get', path: '/adjudication/decision/list', surfaces: adminRoot, rootPrefix, area,
    summary: 'Lists decisions according to a filter',
    request: { query: DecisionsQuery },
    response: { description: 'A page of decisions', schema: z.array(AdjudicatorDecision) },
    missing,
  }),
  defineOperation({
    id: 'getAdjudicatorDecisionsCount', method: 'get', path: '/adjudication/decision/list/count', surfaces: adminRoot, rootPrefix, area,
    summary: 'Counts adjudicator decisions',
    request: { query: DecisionsCountQuery },
    response: { description: 'How many decisions match', schema: CountSchema },
    missing,
  }),
  defineOperation({
    id: 'getAdjudicationAdjudicatorDecisions', method: 'get', path: '/adjudication/decision/adjudication', surfaces: admin, area,
    summary: 'Gets adjudicator decisions',
    description: 'The decisions recorded on one case, pending or solved.',
    request: { query: DecisionsOfCaseQuery },
    response: { description: 'The decisions of the case', schema: AdjudicationAdjudicatorDecision },
    missing,
  }),
  defineOperation({
    id: 'solveAdjudicationCase', method: 'post', path: '/adjudication/solve', surfaces: adminRoot, rootPrefix, area,
    summary: 'Solves a pending adjudication',
    description:
      'Records the caller\'s decision. When adjudication.requiredDecisions decisions agree, the case moves to the solved store and the probe subject becomes ENROLLED (NOT_DUPLICATE) or REJECTED (DUPLICATE); disagreement marks the case CONFLICTED for an ADMIN to settle.',
    request: { body: SolveAdjudicationRequest },
    response: { description: 'The recorded decision and the state of the case', schema: SolveAdjudicationResult },
    missing,
  }),
];
