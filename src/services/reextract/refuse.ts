import type { Principal } from '../auth/principal.js';
import type { Surface } from '../../auth/roles.js';
import { DomainError } from '../errors.js';
import { recordOperation, type OperationStatus } from '../operation-log/record.js';
import type { ServiceContext } from '../context.js';

/** Who asked for a re-extraction: a request's caller, or the gallery-wide job acting as an administrator. */
export interface Caller {
  principal: Principal;
  surface: Surface;
}

/** What a refused re-extraction leaves in the log besides its status and reason. */
interface Refusal {
  uuid: string;
  status: OperationStatus;
  reason: string;
  subjectId?: string | null;
  started: number;
  caller: Caller;
  /** Extra members of the 422 problem (and the operation's details), e.g. the samples concerned. */
  extras?: Record<string, unknown>;
  score?: number | null;
  threshold?: number | null;
  checks?: unknown;
}

/**
 * Record a refused REEXTRACT operation in a transaction of its own (nothing else was written), then throw
 * the 422 that tells the client why, carrying the operation's UUID and status so it can be looked up.
 * Every re-extraction attempt is thus in the operation log, as every enrolment attempt is.
 */
export async function refuse(services: { ctx: ServiceContext }, refusal: Refusal): Promise<never> {
  const { ctx } = services;
  const { extras = {} } = refusal;
  await recordOperation(ctx.db, {
    uuid: refusal.uuid,
    type: 'REEXTRACT',
    status: refusal.status,
    subjectId: refusal.subjectId ?? null,
    modalities: ['FACE'],
    score: refusal.score ?? null,
    threshold: refusal.threshold ?? null,
    checks: refusal.checks,
    details: { reason: refusal.reason, ...extras },
    durationMs: performance.now() - refusal.started,
    principal: refusal.caller.principal,
    surface: refusal.caller.surface,
    at: ctx.now(),
  });
  throw new DomainError('unprocessable', refusal.reason, {
    operationUuid: refusal.uuid,
    operationStatus: refusal.status,
    ...(refusal.score !== undefined && refusal.score !== null ? { score: refusal.score } : {}),
    ...(refusal.threshold !== undefined && refusal.threshold !== null ? { threshold: refusal.threshold } : {}),
    ...extras,
  });
}
