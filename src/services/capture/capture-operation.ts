import { findOperationOutcome } from '../../db/repositories/capture.js';
import { analyseSamples } from '../biometrics/analyse-samples.js';
import type { AnalysedImage, FaceGates } from '../biometrics/face-samples.js';
import { admitEnrolment, storeEnrolment } from '../enrolment/enrol.js';
import { DomainError } from '../errors.js';
import type { OperationServices } from '../operation-services.js';
import { admitOperation, runOperation } from '../operation-log/create.js';
import { recordOperation, type OperationStatus } from '../operation-log/record.js';
import type { ActiveLiveness } from './active-liveness.js';
import { capturedModalities } from './capture-setup.js';
import type { CaptureCaller, CaptureParams, CaptureResult } from './capture-types.js';
import { challengeText, refusal, refusalStatus, type RefusalReason } from './refusal-reasons.js';
import type { SessionSettings } from './session-settings.js';

/**
 * What a capture session does with its outcome in the operation log: run the operation on the selected frames'
 * analyses as the JSON path runs it, or record why none ran (the capture timed out, the liveness instructions were not
 * followed).
 */

/** The session an operation runs for: its init params, who started it, and the settings its params override. */
export interface CaptureOperationContext {
  services: OperationServices;
  params: CaptureParams;
  caller: CaptureCaller;
  overrides: SessionSettings;
}

/**
 * Run the operation on the selected frames as the JSON path does, held to the session's overrides: its
 * matching, identification and deduplication thresholds, and the gates the frames passed, re-applied to the
 * frames' own analyses (analysed for what this purpose needs: `frameMeasures`), so no model runs on a chosen
 * frame again; only the voice recording is analysed here. A refused operation is an outcome too (its status and
 * UUID), not an error.
 */
export async function runCaptureOperation(
  c: CaptureOperationContext,
  frames: readonly AnalysedImage[],
  gates: FaceGates,
  wav?: Uint8Array,
): Promise<CaptureResult> {
  const { services, params } = c;
  // The request the JSON path would have had: what admits the operation and what it records.
  const faces = frames.length ? frames.map((f) => ({ image: f.bytes })) : undefined;
  const voices = wav ? [{ audio: wav }] : undefined;
  const caller = { principal: c.caller.principal, surface: c.caller.surface };
  const analysed = () =>
    analyseSamples(
      services,
      { faces: { analysed: frames }, voices: wav ? [wav] : [] },
      { purpose: params.purpose, gates },
    );
  try {
    if (params.purpose === 'ENROLL') {
      const options = { deduplicate: true, checkIcao: params.checkIcao, detectLiveness: gates.requireLiveness };
      const request = { subjectId: params.subjectId!, faces, voices, options };
      const admitted = await admitEnrolment(services, request);
      const session = { deduplication: c.overrides.deduplication };
      const subject = await storeEnrolment(services, admitted, await analysed(), caller, session);
      const row = await findOperationOutcome(services.ctx.db, subject.enrollmentOperationUuid!);
      return {
        status: row?.status ?? 'SUCCESS',
        operationUuid: subject.enrollmentOperationUuid,
        subjectId: params.subjectId,
        subjectStatus: subject.status,
        ...(row?.score != null ? { score: row.score } : {}),
        ...(subject.candidates?.length ? { candidates: subject.candidates } : {}),
      };
    }
    const options = { checkIcao: params.checkIcao, detectLiveness: gates.requireLiveness, ...c.overrides.matching };
    const request = { type: params.purpose, subjectId: params.subjectId, faces, voices, options };
    const admitted = await admitOperation(services, request, caller);
    const op = await runOperation(services, admitted, await analysed());
    return {
      status: op.status,
      operationUuid: op.uuid,
      ...(op.subjectId ? { subjectId: op.subjectId } : {}),
      ...(op.score !== undefined ? { score: op.score } : {}),
      ...(op.candidates ? { candidates: op.candidates } : {}),
    };
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    // A refused operation is recorded by the service; its status and UUID travel in the problem's extras.
    const { operationUuid, operationStatus } = error.extras as { operationUuid?: string; operationStatus?: string };
    return { status: operationStatus ?? 'FAILED', ...(operationUuid ? { operationUuid } : {}), reason: error.detail };
  }
}

/** Record a capture that ran no operation, as the operation its purpose names, with why in `details`: its UUID. */
async function recordCaptureWithoutOperation(
  c: CaptureOperationContext,
  m: {
    status: OperationStatus;
    modalities: ('FACE' | 'VOICE')[];
    details: Record<string, unknown>;
    durationMs: number;
  },
): Promise<string> {
  const uuid = crypto.randomUUID();
  const { principal, surface } = c.caller;
  await recordOperation(c.services.ctx.db, {
    uuid,
    type: c.params.purpose,
    status: m.status,
    subjectId: c.params.subjectId ?? null,
    modalities: m.modalities,
    details: m.details,
    durationMs: m.durationMs,
    principal,
    surface,
    at: c.services.ctx.now(),
  });
  return uuid;
}

/** The reason of a capture whose active liveness instructions were not followed (docs/gateway-capture.md). */
const ACTIVE_LIVENESS_FAILED = 'ACTIVE_LIVENESS_FAILED';

/**
 * The instructions were not followed: no operation runs on the frames, and the refusal is recorded as the
 * JSON path records a failed liveness check (LIVENESS_CHECK_FAILED), its details saying which instructions
 * were given and how each ended.
 */
export async function refuseActiveLiveness(
  c: CaptureOperationContext,
  active: ActiveLiveness,
  framesAnalysed: number,
  durationMs: number,
): Promise<CaptureResult> {
  const uuid = await recordCaptureWithoutOperation(c, {
    status: 'LIVENESS_CHECK_FAILED',
    modalities: capturedModalities(c.params),
    durationMs,
    details: {
      reason: ACTIVE_LIVENESS_FAILED,
      activeLiveness: active.history,
      capture: { framesAnalysed },
    },
  });
  return {
    status: 'LIVENESS_CHECK_FAILED',
    operationUuid: uuid,
    ...(c.params.subjectId ? { subjectId: c.params.subjectId } : {}),
    reason: ACTIVE_LIVENESS_FAILED,
    // What went wrong last, in words: the wrong move, too slow, or the face lost.
    text: challengeText(String(active.history.at(-1)?.outcome ?? '')),
  };
}

/**
 * Every frame failed for the same reason for the whole patience window (BIMS_CAPTURE_PATIENCE_SECONDS): the
 * capture ends with that reason, recorded as the JSON path records such a photo (QUALITY_CHECK_FAILED, or
 * LIVENESS_CHECK_FAILED for no live person), instead of running to its timeout.
 */
export async function refuseFrames(
  c: CaptureOperationContext,
  reason: RefusalReason,
  spent: { framesAnalysed: number; durationMs: number; patienceSeconds: number },
): Promise<CaptureResult> {
  const status = refusalStatus(reason);
  const uuid = await recordCaptureWithoutOperation(c, {
    status,
    modalities: capturedModalities(c.params),
    durationMs: spent.durationMs,
    details: { reason, capture: { framesAnalysed: spent.framesAnalysed, patienceSeconds: spent.patienceSeconds } },
  });
  return {
    status,
    operationUuid: uuid,
    ...(c.params.subjectId ? { subjectId: c.params.subjectId } : {}),
    ...refusal(reason),
  };
}

/**
 * A capture that ends without a result: no result within its `timeoutSeconds` (`TIMEOUT`), or nobody seen (nor,
 * voice-only, heard) for `idleMs` (`IDLE`, BIMS_CAPTURE_IDLE_SECONDS). Recorded as a FAILED operation whose
 * details say which; the capture's outcome is TIMEOUT either way, with the reason in words.
 */
export async function recordTimeout(
  c: CaptureOperationContext,
  why: 'TIMEOUT' | 'IDLE',
  spent: { framesAnalysed: number; lastGuidance: string | null; durationMs: number },
  idleMs: number,
): Promise<CaptureResult> {
  const uuid = await recordCaptureWithoutOperation(c, {
    status: 'FAILED',
    modalities: capturedModalities(c.params),
    durationMs: spent.durationMs,
    details: { reason: why, capture: { framesAnalysed: spent.framesAnalysed, lastGuidance: spent.lastGuidance } },
  });
  const reason =
    why === 'IDLE' ? `nobody seen for ${idleMs / 1000} s` : `no result within ${c.params.timeoutSeconds} s`;
  return { status: 'TIMEOUT', operationUuid: uuid, reason };
}
