import { json } from '../../db/json.js';
import { insertOperation, type OperationRow } from '../../db/repositories/operation-log.js';
import type { Queryable } from '../../db/repositories/queryable.js';
import type { Principal } from '../auth/principal.js';
import type { Surface } from '../../auth/roles.js';

export type OperationType = 'ENROLL' | 'VERIFY' | 'IDENTIFY' | 'CHECK' | 'REMOTE_VERIFY' | 'REEXTRACT';
export type OperationStatus =
  | 'SUCCESS'
  | 'MATCH_NOT_FOUND'
  | 'DUPLICATE_FOUND'
  | 'PENDING_ADJUDICATION'
  | 'NO_FACE_DETECTED'
  | 'MULTIPLE_FACES'
  | 'QUALITY_CHECK_FAILED'
  | 'LIVENESS_CHECK_FAILED'
  | 'FAILED';

/** A candidate as operations store and present it. */
export interface StoredCandidate {
  subjectId: string;
  score: number;
  scores: { FACE?: number; VOICE?: number };
  rank?: number;
}

/** What one biometric operation leaves in the log. */
export interface OperationRecord {
  uuid: string;
  type: OperationType;
  status: OperationStatus;
  subjectId?: string | null;
  modalities: ('FACE' | 'VOICE')[];
  score?: number | null;
  threshold?: number | null;
  candidates?: StoredCandidate[] | null;
  checks?: unknown;
  /** Anything else worth keeping for the audit (reasons, per-sample results); never template or image bytes. */
  details?: Record<string, unknown> | null;
  durationMs: number;
  principal: Principal;
  surface: Surface;
  at: Date;
}

/**
 * Write one operation row. Called inside the transaction that stores the operation's effects, so an
 * operation is logged exactly when its effects are; failed operations are logged in a transaction of their own.
 */
export async function recordOperation(trx: Queryable, op: OperationRecord): Promise<OperationRow> {
  return insertOperation(trx, {
    uuid: op.uuid,
    type: op.type,
    status: op.status,
    subject_id: op.subjectId ?? null,
    modalities: json(op.modalities),
    score: op.score ?? null,
    threshold: op.threshold ?? null,
    candidates: json(op.candidates ?? null),
    checks: json(op.checks ?? null),
    details: json(op.details ?? null),
    duration_ms: Math.max(0, Math.round(op.durationMs)),
    account_id: op.principal.accountId,
    surface: op.surface,
    created_at: op.at,
  });
}

/** An operation row (decoded by the repository) as the `Operation` model shows it. */
export function presentOperation(row: OperationRow) {
  return {
    id: row.id,
    uuid: row.uuid,
    type: row.type,
    status: row.status,
    ...(row.subject_id !== null ? { subjectId: row.subject_id } : {}),
    modalities: row.modalities ?? [],
    ...(row.score !== null ? { score: row.score } : {}),
    ...(row.threshold !== null ? { threshold: row.threshold } : {}),
    ...(row.candidates ? { candidates: row.candidates } : {}),
    ...(row.checks ? { checks: row.checks } : {}),
    durationMs: row.duration_ms,
    createdAt: row.created_at.toISOString(),
    ...(row.account_id !== null ? { accountId: row.account_id } : {}),
    surface: row.surface ?? 'admin',
  };
}
