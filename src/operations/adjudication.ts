import { CountSchema, IdsBodySchema, binary, z } from '../schemas/common.js';
import {
  AdjudicationAdjudicatorDecision,
  AdjudicationPending,
  AdjudicationPendingOperation,
  AdjudicationSolved,
  AdjudicationSolvedOperation,
  AdjudicatorDecision,
  CaseIdQuery,
  ClearAdjudicationsResult,
  DecisionsCountQuery,
  DecisionsOfCaseQuery,
  DecisionsQuery,
  PendingCountQuery,
  PendingQuery,
  SolveAdjudicationRequest,
  SolveAdjudicationResult,
  SolvedCountQuery,
  SolvedQuery,
} from '../schemas/adjudication.js';
import { DeletedCount } from '../schemas/primitives.js';
import { getPendingCase, getSolvedCase } from '../services/adjudication/review.js';
import { takeOncoming } from '../services/adjudication/oncoming.js';
import {
  countDecisions,
  countPending,
  countSolved,
  listDecisions,
  listPending,
  listSolved,
} from '../services/adjudication/queries.js';
import { clearPending, clearSolved, deleteSolved } from '../services/adjudication/maintenance.js';
import { decisionsOfCase } from '../services/adjudication/decisions.js';
import { solveCase } from '../services/adjudication/solve.js';
import { caseImages } from '../services/adjudication/case-images.js';
import { answerZip, wantsZip } from './download-handlers.js';
import { defineOperation, emptyAnswer } from './types.js';
import { extractionProblems } from './extraction-problems.js';

const area = 'Adjudication';
const adminRoot = ['admin', 'root'] as const;
const admin = ['admin'] as const;
/**
 * The image downloads need ADMIN, yet an adjudicator must see the faces: a case read with Accept:
 * application/zip answers the images of that case's subjects only.
 */
const zipNote =
  'With `Accept: application/zip` (ranked above application/json): the images of the probe and of every candidate still present, as a ZIP laid out like the image downloads (manifest.json first, entries stored), so that adjudicators can see the faces without the ADMIN scope the image downloads need.';
/** On the root surface, adjudication lives under /adjudicator and needs ADJUDICATOR. */
const rootPrefix = '/adjudicator' as const;

/** Seed section 4.2: adjudication of possible duplicates, on admin and (under /adjudicator) root. */
export const adjudicationOperations = [
  defineOperation({
    id: 'getAdjudicationPending',
    method: 'get',
    path: '/adjudication/pending',
    surfaces: adminRoot,
    rootPrefix,
    area,
    problems: extractionProblems,
    summary: 'Gets the oncoming adjudication',
    description: `One pending case by its identifier, with the operation and samples for side-by-side review. ${zipNote}`,
    request: { query: CaseIdQuery },
    response: {
      description: 'The pending case',
      schema: AdjudicationPendingOperation,
      content: { 'application/zip': binary },
    },
    handle: async (input) =>
      wantsZip(input.request.headers.get('accept'))
        ? answerZip(input, await caseImages(input.services.ctx, input.query.id, 'pending'))
        : getPendingCase(input.services, input.query.id),
  }),
  defineOperation({
    id: 'getOncomingAdjudicationPending',
    method: 'get',
    path: '/adjudication/pending/oncoming',
    surfaces: adminRoot,
    rootPrefix,
    area,
    problems: extractionProblems,
    summary: 'Gets the oncoming adjudication',
    description:
      'Hands the caller the oldest unassigned case and leases it to them (adjudication.leaseSeconds); two adjudicators never get the same case. A caller that already holds an unexpired lease gets that case again (the lease is not extended). Answers 204 No Content when no case waits for the caller. CONFLICTED cases are not handed out: an ADMIN finds them with status=CONFLICTED and settles them.',
    response: { description: 'The case now leased to the caller', schema: AdjudicationPendingOperation },
    emptyResponses: { 204: 'No case waits for the caller' },
    handle: async ({ services, principal }) => (await takeOncoming(services, principal)) ?? emptyAnswer(204),
  }),
  defineOperation({
    id: 'getAdjudicationsPending',
    method: 'get',
    path: '/adjudication/pending/list',
    surfaces: adminRoot,
    rootPrefix,
    area,
    summary: 'Lists pending adjudications according to a filter',
    request: { query: PendingQuery },
    response: { description: 'A page of pending cases', schema: z.array(AdjudicationPending) },
    handle: ({ services, query }) => listPending(services.ctx, query),
  }),
  defineOperation({
    id: 'getAdjudicationsPendingCount',
    method: 'get',
    path: '/adjudication/pending/list/count',
    surfaces: adminRoot,
    rootPrefix,
    area,
    summary: 'Counts pending adjudications',
    request: { query: PendingCountQuery },
    response: { description: 'How many pending cases match', schema: CountSchema },
    handle: ({ services, query }) => countPending(services.ctx, query),
  }),
  defineOperation({
    id: 'getAdjudicationSolved',
    method: 'get',
    path: '/adjudication/solved',
    surfaces: adminRoot,
    rootPrefix,
    area,
    problems: extractionProblems,
    summary: 'Gets a solved adjudication',
    description: zipNote,
    request: { query: CaseIdQuery },
    response: {
      description: 'The solved case',
      schema: AdjudicationSolvedOperation,
      content: { 'application/zip': binary },
    },
    handle: async (input) =>
      wantsZip(input.request.headers.get('accept'))
        ? answerZip(input, await caseImages(input.services.ctx, input.query.id, 'solved'))
        : getSolvedCase(input.services, input.query.id),
  }),
  defineOperation({
    id: 'getAdjudicationsSolved',
    method: 'get',
    path: '/adjudication/solved/list',
    surfaces: admin,
    area,
    summary: 'Lists solved adjudications according to a filter',
    request: { query: SolvedQuery },
    response: { description: 'A page of solved cases', schema: z.array(AdjudicationSolved) },
    handle: ({ services, query }) => listSolved(services.ctx, query),
  }),
  defineOperation({
    id: 'getAdjudicationsSolvedCount',
    method: 'get',
    path: '/adjudication/solved/list/count',
    surfaces: admin,
    area,
    summary: 'Counts solved adjudications',
    request: { query: SolvedCountQuery },
    response: { description: 'How many solved cases match', schema: CountSchema },
    handle: ({ services, query }) => countSolved(services.ctx, query),
  }),
  defineOperation({
    id: 'deleteAdjudicationsSolved',
    method: 'delete',
    path: '/adjudication/solved/delete',
    surfaces: admin,
    area,
    summary: 'Deletes a list of solved adjudications',
    description: 'All or nothing, with the decisions of those cases.',
    request: { body: IdsBodySchema },
    response: { description: 'How many cases were deleted', schema: DeletedCount },
    handle: ({ services, body }) => deleteSolved(services.ctx, body.ids),
  }),
  defineOperation({
    id: 'clearAdjudicationSolvedDb',
    method: 'delete',
    path: '/adjudication/solved/clear-db',
    surfaces: admin,
    area,
    summary: 'Clears the solved-case store; also clears the adjudicator decisions belonging to those cases',
    response: { description: 'What was removed', schema: ClearAdjudicationsResult },
    handle: ({ services }) => clearSolved(services.ctx),
  }),
  defineOperation({
    id: 'clearAdjudicationsPendingDb',
    method: 'delete',
    path: '/adjudication/pending/clear-db',
    surfaces: admin,
    area,
    summary: 'Clears the pending-case store; also clears the adjudicator decisions belonging to those cases',
    description:
      'Removes PENDING and CONFLICTED cases with their decisions. Their probe subjects, still PENDING_ADJUDICATION, become REJECTED in the same transaction (no human accepted them, and without a case they could never leave that status), and their ENROLL operations DUPLICATE_FOUND; the answer counts the subjects. Their samples stay.',
    response: { description: 'What was removed', schema: ClearAdjudicationsResult },
    handle: ({ services }) => clearPending(services.ctx),
  }),
  defineOperation({
    id: 'getAdjudicatorDecisions',
    method: 'get',
    path: '/adjudication/decision/list',
    surfaces: adminRoot,
    rootPrefix,
    area,
    summary: 'Lists decisions according to a filter',
    request: { query: DecisionsQuery },
    response: { description: 'A page of decisions', schema: z.array(AdjudicatorDecision) },
    handle: ({ services, query }) => listDecisions(services.ctx, query),
  }),
  defineOperation({
    id: 'getAdjudicatorDecisionsCount',
    method: 'get',
    path: '/adjudication/decision/list/count',
    surfaces: adminRoot,
    rootPrefix,
    area,
    summary: 'Counts adjudicator decisions',
    request: { query: DecisionsCountQuery },
    response: { description: 'How many decisions match', schema: CountSchema },
    handle: ({ services, query }) => countDecisions(services.ctx, query),
  }),
  defineOperation({
    id: 'getAdjudicationAdjudicatorDecisions',
    method: 'get',
    path: '/adjudication/decision/adjudication',
    surfaces: admin,
    area,
    summary: 'Gets adjudicator decisions',
    description: 'The decisions recorded on one case, pending or solved.',
    request: { query: DecisionsOfCaseQuery },
    response: { description: 'The decisions of the case', schema: AdjudicationAdjudicatorDecision },
    handle: ({ services, query }) => decisionsOfCase(services, query.caseId),
  }),
  defineOperation({
    id: 'solveAdjudicationCase',
    method: 'post',
    path: '/adjudication/solve',
    surfaces: adminRoot,
    rootPrefix,
    area,
    problems: { 409: 'The case is already solved, or this adjudicator has already decided on it' },
    summary: 'Solves a pending adjudication',
    description:
      "Records the caller's decision. When adjudication.requiredDecisions decisions agree, the case moves to the solved store and the probe subject becomes ENROLLED (NOT_DUPLICATE) or REJECTED (DUPLICATE), and the ENROLL operation that opened the case changes from PENDING_ADJUDICATION to SUCCESS or DUPLICATE_FOUND accordingly; disagreement marks the case CONFLICTED for an ADMIN to settle. Only the adjudicator holding an unexpired lease on the case, or an ADMIN, may decide (403 otherwise); an ADMIN's decision is final and settles the case at once. One decision per account per case (409 on a second, and on a solved case).",
    request: { body: SolveAdjudicationRequest },
    response: { description: 'The recorded decision and the state of the case', schema: SolveAdjudicationResult },
    handle: ({ services, principal, body }) => solveCase(services, principal, body),
  }),
];
