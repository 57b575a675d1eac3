import { pagingQuery, queryDate, z } from './common.js';
import { BiometricFaceData, BiometricVoiceData, Image } from './biometric-data.js';
import { CandidateData, Operation } from './operations.js';
import { Subject } from './subjects.js';
import { SubjectIdString, createdRange, dateTime, idParam, numericId, uuid } from './primitives.js';

/**
 * Adjudication (seed section 4.2): cases opened when enrolment finds a possible duplicate, the decisions
 * adjudicators record on them, and the solved-case store.
 */

const Decision = z.enum(['DUPLICATE', 'NOT_DUPLICATE']);
const PendingStatus = z.enum(['OPEN', 'ASSIGNED', 'CONFLICTED']).openapi({
  description:
    'OPEN: waits for an adjudicator; ASSIGNED: leased to one; CONFLICTED: decisions disagree, an ADMIN settles it',
});

export const AdjudicatorDecision = z
  .object({
    id: numericId,
    caseId: numericId,
    accountId: numericId,
    username: z.string().optional(),
    decision: Decision,
    duplicateOfSubjectId: SubjectIdString.optional(),
    comment: z.string(),
    createdAt: dateTime,
  })
  .openapi('AdjudicatorDecision');

export const AdjudicationPending = z
  .object({
    id: numericId,
    operationUuid: uuid,
    subjectId: SubjectIdString.openapi({ description: 'The probe subject, PENDING_ADJUDICATION' }),
    candidates: z.array(CandidateData),
    status: PendingStatus,
    createdAt: dateTime,
    assignedTo: numericId.optional().openapi({ description: 'Account holding the lease' }),
    assignedAt: dateTime.optional(),
    leaseExpiresAt: dateTime.optional(),
    decisions: z.array(AdjudicatorDecision).openapi({ description: 'Decisions so far' }),
  })
  .openapi('AdjudicationPending', { description: 'A case waiting for adjudication' });

export const AdjudicationSolved = z
  .object({
    id: numericId,
    operationUuid: uuid,
    subjectId: SubjectIdString,
    candidates: z.array(CandidateData),
    createdAt: dateTime,
    solvedAt: dateTime,
    outcome: Decision,
    duplicateOfSubjectId: SubjectIdString.optional(),
    decisions: z.array(AdjudicatorDecision),
  })
  .openapi('AdjudicationSolved', {
    description: 'A solved case; the probe subject became ENROLLED (NOT_DUPLICATE) or REJECTED (DUPLICATE)',
  });

/** The samples of the probe and of each candidate, for side-by-side review. */
const reviewParts = {
  operation: Operation.optional().openapi({
    description: 'The ENROLL operation that opened the case; absent if deleted from the log since',
  }),
  enrolledBy: z
    .object({
      accountId: numericId,
      username: z.string().optional().openapi({ description: 'Absent when the account was deleted since' }),
    })
    .optional()
    .openapi({
      description:
        'The account that made the ENROLL operation, by name, so that an adjudicator (who may not list accounts) sees who enrolled the probe',
    }),
  probe: z.object({
    subject: Subject.optional(),
    faces: z.array(BiometricFaceData),
    voices: z.array(BiometricVoiceData),
    images: z.array(Image),
  }),
  candidates: z.array(
    z.object({
      candidate: CandidateData,
      subject: Subject.optional().openapi({ description: 'Absent when the candidate was deleted since' }),
      images: z.array(Image),
    }),
  ),
};

export const AdjudicationPendingOperation = z
  .object({ adjudication: AdjudicationPending, ...reviewParts })
  .openapi('AdjudicationPendingOperation', {
    description: 'A pending case with its operation and samples for side-by-side review',
  });

export const AdjudicationSolvedOperation = z
  .object({ adjudication: AdjudicationSolved, ...reviewParts })
  .openapi('AdjudicationSolvedOperation', { description: 'A solved case with its operation and samples' });

export const AdjudicationAdjudicatorDecision = z
  .object({
    caseId: numericId,
    state: z.enum(['PENDING', 'CONFLICTED', 'SOLVED']),
    outcome: Decision.optional(),
    requiredDecisions: z.number().int().min(1),
    decisions: z.array(AdjudicatorDecision),
  })
  .openapi('AdjudicationAdjudicatorDecision', { description: 'The decisions recorded on one case, pending or solved' });

export const SolveAdjudicationRequest = z
  .strictObject({
    caseId: numericId,
    decision: Decision,
    duplicateOfSubjectId: SubjectIdString.optional().openapi({
      description: 'DUPLICATE: which candidate (default: the best)',
    }),
    comment: z.string().max(2000).default(''),
  })
  .refine((v) => v.decision === 'DUPLICATE' || v.duplicateOfSubjectId === undefined, {
    path: ['duplicateOfSubjectId'],
    message: 'only with decision DUPLICATE',
  })
  // The refinement above as JSON Schema states it for tools.
  .openapi({
    if: { not: { properties: { decision: { const: 'DUPLICATE' } } } },
    then: { not: { required: ['duplicateOfSubjectId'] } },
  } as object);

export const SolveAdjudicationResult = z.object({
  decision: AdjudicatorDecision,
  state: z.enum(['PENDING', 'CONFLICTED', 'SOLVED']).openapi({ description: 'The case after this decision' }),
  outcome: Decision.optional(),
});

export const ClearAdjudicationsResult = z.object({
  deleted: z.number().int().min(0).openapi({ description: 'Cases removed' }),
  decisionsDeleted: z.number().int().min(0),
  subjectsRejected: z.number().int().min(0).openapi({
    description:
      'Probe subjects that were PENDING_ADJUDICATION and became REJECTED because their case was cleared (always 0 for the solved store)',
  }),
});

// ---- query parameters ---------------------------------------------------------------------------------

export const CaseIdQuery = z.strictObject({ id: idParam.openapi({ description: 'Case identifier' }) });
export const DecisionsOfCaseQuery = z.strictObject({ caseId: idParam });

const pendingFilter = {
  subjectId: SubjectIdString.optional().openapi({ description: 'Probe subject identifier prefix' }),
  status: PendingStatus.optional(),
  assignedTo: idParam.optional(),
  ...createdRange,
};
export const PendingQuery = z.strictObject({
  ...pendingFilter,
  ...pagingQuery(['id', 'createdAt', 'subjectId', 'assignedAt', 'status']),
});
export const PendingCountQuery = z.strictObject(pendingFilter);

const solvedFilter = {
  subjectId: SubjectIdString.optional().openapi({ description: 'Probe subject identifier prefix' }),
  outcome: Decision.optional(),
  ...createdRange,
  solvedFrom: queryDate.optional().openapi({ description: 'Solved at or after (ISO 8601)' }),
  solvedTo: queryDate.optional().openapi({ description: 'Solved at or before (ISO 8601)' }),
};
export const SolvedQuery = z.strictObject({
  ...solvedFilter,
  ...pagingQuery(['id', 'createdAt', 'solvedAt', 'subjectId', 'outcome']),
});
export const SolvedCountQuery = z.strictObject(solvedFilter);

const decisionFilter = {
  caseId: idParam.optional(),
  accountId: idParam.optional(),
  decision: Decision.optional(),
  ...createdRange,
};
export const DecisionsQuery = z.strictObject({
  ...decisionFilter,
  ...pagingQuery(['id', 'createdAt', 'caseId', 'accountId', 'decision']),
});
export const DecisionsCountQuery = z.strictObject(decisionFilter);
