import { cosineInt8, faceRecord, parseTemplate, type Template } from '../../biometrics/template.js';
import { cosineToScore } from '../../biometrics/calibration.js';
import { BiometricError } from '../../biometrics/errors.js';
import type { Principal } from '../auth/principal.js';
import type { Surface } from '../../auth/roles.js';
import { findSubjectFaceTemplate } from '../../db/repositories/templates.js';
import { DomainError, invalid } from '../errors.js';
import { recordOperation } from '../operation-log/record.js';
import type { BoundTemplate } from './bound.js';
import { decryptDeviceTemplate } from './encrypted.js';
import { closestHeldTemplate, REPLAY_COSINE_BOUND } from './replay.js';
import type { ServiceContext } from '../context.js';
import type { SettingsService } from '../settings/settings.js';

interface RemoteVerifyInput {
  /** The fresh template the device extracted (format v1). */
  template: Uint8Array;
  /** The enrolled template as the service encrypted it for itself. */
  encryptedTemplate: string;
  subjectId?: string;
  principal: Principal;
  surface: Surface;
}

/**
 * Why remoteVerify refused, in the problem body (`reason`) and the FAILED operation's details. Each names one
 * thing the caller can tell apart: the encrypted template is foreign or tampered (TEMPLATE_INVALID), of the
 * old unbound format (TEMPLATE_UNBOUND), names another subject than `subjectId` (SUBJECT_MISMATCH), its
 * subject was deleted (SUBJECT_DELETED), deleted and enrolled again (SUBJECT_REENROLLED), is REJECTED
 * (SUBJECT_REJECTED), was re-extracted since (TEMPLATE_REEXTRACTED), it expired (TEMPLATE_EXPIRED); the probe
 * is of another template version (TEMPLATE_VERSION_MISMATCH), unusable (PROBE_INVALID), or a copy of a
 * template the service holds for the subject rather than a fresh capture (PROBE_REPLAYED).
 */
type RemoteVerifyRefusal =
  | 'TEMPLATE_INVALID'
  | 'TEMPLATE_UNBOUND'
  | 'SUBJECT_MISMATCH'
  | 'SUBJECT_DELETED'
  | 'SUBJECT_REENROLLED'
  | 'SUBJECT_REJECTED'
  | 'TEMPLATE_REEXTRACTED'
  | 'TEMPLATE_EXPIRED'
  | 'TEMPLATE_VERSION_MISMATCH'
  | 'PROBE_INVALID'
  | 'PROBE_REPLAYED';

/**
 * `remoteVerify`: 1:1 of a device's fresh template against the enrolled template the device carries encrypted
 * for the service. The encrypted template is bound to the enrolment that issued it and stays good only while
 * that enrolment stands unchanged: the same subject row (not deleted, not deleted and enrolled again), not
 * REJECTED, with the same face template (not re-extracted), and before its expiry. The probe must be a fresh
 * capture: one at or above {@link REPLAY_COSINE_BOUND} of any face template the service holds or handed out
 * for the subject is refused. Every attempt that gets past input validation is logged as a REMOTE_VERIFY
 * operation: SUCCESS or MATCH_NOT_FOUND, or FAILED with the reason (a replay is worth an audit trail).
 */
export async function remoteVerify(
  services: { ctx: ServiceContext; settings: SettingsService },
  input: RemoteVerifyInput,
) {
  const { ctx } = services;
  const started = Date.now();
  const uuid = crypto.randomUUID();
  const fresh = readFresh(input.template);
  let subjectId: string | null = input.subjectId ?? null;
  let audit: Record<string, unknown> = {};
  try {
    const enrolled = await decryptDeviceTemplate(ctx, input.encryptedTemplate);
    subjectId = enrolled.subjectId;
    if (input.subjectId !== undefined && input.subjectId !== subjectId) {
      throw unprocessable('body.subjectId', 'does not match the subject of the encrypted template', 'SUBJECT_MISMATCH');
    }
    await assertEnrolmentStands(services, enrolled);
    if (fresh.templateVersion !== enrolled.template.templateVersion) {
      throw unprocessable(
        'body.template',
        `template version ${fresh.templateVersion} differs from the enrolled ${enrolled.template.templateVersion}`,
        'TEMPLATE_VERSION_MISMATCH',
      );
    }
    const a = faceRecord(fresh),
      b = faceRecord(enrolled.template);
    if (!a) throw unprocessable('body.template', 'holds no face record', 'PROBE_INVALID');
    if (!b) throw unprocessable('body.encryptedTemplate', 'holds no face record', 'TEMPLATE_INVALID');
    if (a.q.length !== b.q.length)
      throw unprocessable('body.template', 'face record length differs from the enrolled one', 'PROBE_INVALID');
    const closest = await closestHeldTemplate(ctx, enrolled.subjectRef, fresh, enrolled.template);
    if (closest && closest.cosine >= REPLAY_COSINE_BOUND) {
      // Which template it copies and how closely goes to the audit trail only, not to the caller.
      audit = { copyOf: closest.source, cosine: round4(closest.cosine) };
      throw unprocessable(
        'body.template',
        'is a copy of a template the service holds for the subject, not a fresh capture',
        'PROBE_REPLAYED',
      );
    }
    const score = round(cosineToScore(cosineInt8(a.q, b.q)));
    const threshold = await services.settings.get('matching.threshold');
    const verified = score >= threshold;
    await recordOperation(ctx.db, {
      uuid,
      type: 'REMOTE_VERIFY',
      status: verified ? 'SUCCESS' : 'MATCH_NOT_FOUND',
      subjectId,
      modalities: ['FACE'],
      score,
      threshold,
      details: { templateVersion: fresh.templateVersion },
      durationMs: Date.now() - started,
      principal: input.principal,
      surface: input.surface,
      at: ctx.now(),
    });
    return { verified, score, threshold, operationUuid: uuid, subjectId };
  } catch (e) {
    if (e instanceof DomainError) {
      await recordOperation(ctx.db, {
        uuid,
        type: 'REMOTE_VERIFY',
        status: 'FAILED',
        subjectId,
        modalities: ['FACE'],
        details: { reason: e.extras.reason ?? e.code, detail: e.detail, ...audit },
        durationMs: Date.now() - started,
        principal: input.principal,
        surface: input.surface,
        at: ctx.now(),
      });
      e.extras.operationUuid = uuid;
    }
    throw e;
  }
}

/** The device's template, strictly parsed: unreadable bytes are the client's 400 and are not logged. */
function readFresh(bytes: Uint8Array): Template {
  try {
    return parseTemplate(bytes);
  } catch (e) {
    if (e instanceof BiometricError) throw invalid('body.template', e.message);
    throw e;
  }
}

/**
 * The enrolment the encrypted template was issued for still stands: its subject row exists (404
 * SUBJECT_DELETED otherwise), is the same row and enrolment (a subjectId deleted and enrolled again has a
 * new row: SUBJECT_REENROLLED), is not REJECTED, still has the face template that was issued (re-extraction
 * replaces it: TEMPLATE_REEXTRACTED), and the template has not expired. One snapshot, so the checks agree.
 */
async function assertEnrolmentStands(services: { ctx: ServiceContext }, enrolled: BoundTemplate): Promise<void> {
  const { ctx } = services;
  const subjectId = enrolled.subjectId;
  // One statement, so one snapshot: the subject row and its face template as of the same moment.
  const subject = await findSubjectFaceTemplate(ctx.db, subjectId);
  if (!subject) {
    throw new DomainError(
      'not-found',
      `Subject '${subjectId}' was not found: it was deleted, and the templates it was given with it`,
      { reason: 'SUBJECT_DELETED' },
    );
  }
  const field = 'body.encryptedTemplate';
  if (
    subject.id !== enrolled.subjectRef ||
    (subject.enrollment_operation_uuid?.toLowerCase() ?? null) !== enrolled.enrollmentUuid
  ) {
    throw unprocessable(
      field,
      `was issued to an earlier enrolment of subject '${subjectId}', since deleted; the subject enrolled now is another`,
      'SUBJECT_REENROLLED',
    );
  }
  if (subject.status === 'REJECTED')
    throw unprocessable(field, `subject '${subjectId}' is REJECTED`, 'SUBJECT_REJECTED');
  if (!subject.data || !sameBytes(new Uint8Array(subject.data), enrolled.templateBytes)) {
    throw unprocessable(
      field,
      `subject '${subjectId}' was re-extracted since this template was issued; fetch a new one`,
      'TEMPLATE_REEXTRACTED',
    );
  }
  if (enrolled.expiresAt && ctx.now().getTime() >= enrolled.expiresAt.getTime()) {
    throw unprocessable(field, `expired at ${enrolled.expiresAt.toISOString()}; fetch a new one`, 'TEMPLATE_EXPIRED');
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** A refusal naming the field and the reason (problem body `reason`, operation details `reason`). */
function unprocessable(field: string, message: string, reason: RemoteVerifyRefusal) {
  return new DomainError('unprocessable', `${field}: ${message}`, { errors: [{ field, message }], reason });
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

const round = (x: number) => Math.round(x * 100) / 100;
