import { cosineInt8, cosineToScore, faceRecord, parseTemplate, BiometricError, type Template } from '../../biometrics/index.js';
import type { Principal } from '../../auth/principal.js';
import type { Surface } from '../../operations/types.js';
import type { Services } from '../index.js';
import { DomainError, invalid, notFound } from '../errors.js';
import { recordOperation } from '../operations/record.js';
import { decryptDeviceTemplate } from './encrypted.js';

export interface RemoteVerifyInput {
  /** The fresh template the device extracted (format v1). */
  template: Uint8Array;
  /** The enrolled template as the service encrypted it for itself. */
  encryptedTemplate: string;
  subjectId?: string;
  principal: Principal;
  surface: Surface;
}

/**
 * `remoteVerify`: 1:1 of a device's fresh template against the enrolled template the device carries encrypted
 * for the service. The subject must still exist (deleting a subject revokes the templates it was given) and
 * must not be REJECTED. Every attempt that gets past input validation is logged as a REMOTE_VERIFY operation:
 * SUCCESS or MATCH_NOT_FOUND, or FAILED with the reason (a tampered ciphertext is worth an audit trail).
 */
export async function remoteVerify(services: Services, input: RemoteVerifyInput) {
  const { ctx } = services;
  const started = Date.now();
  const uuid = crypto.randomUUID();
  const fresh = readFresh(input.template);
  let subjectId: string | null = input.subjectId ?? null;
  try {
    const enrolled = await decryptDeviceTemplate(ctx, input.encryptedTemplate);
    subjectId = enrolled.subjectId!;
    if (input.subjectId !== undefined && input.subjectId !== subjectId) {
      throw unprocessable('body.subjectId', 'does not match the subject of the encrypted template');
    }
    const subject = await ctx.db.selectFrom('subjects').select(['status']).where('subject_id', '=', subjectId).executeTakeFirst();
    if (!subject) throw notFound(`Subject '${subjectId}'`);
    if (subject.status === 'REJECTED') throw unprocessable('body.encryptedTemplate', `subject '${subjectId}' is REJECTED`);
    if (fresh.templateVersion !== enrolled.template.templateVersion) {
      throw unprocessable('body.template', `template version ${fresh.templateVersion} differs from the enrolled ${enrolled.template.templateVersion}`);
    }
    const a = faceRecord(fresh), b = faceRecord(enrolled.template);
    if (!a) throw unprocessable('body.template', 'holds no face record');
    if (!b) throw unprocessable('body.encryptedTemplate', 'holds no face record');
    if (a.q.length !== b.q.length) throw unprocessable('body.template', 'face record length differs from the enrolled one');
    const score = round(cosineToScore(cosineInt8(a.q, b.q)));
    const threshold = await services.settings.get('matching.threshold');
    const verified = score >= threshold;
    await recordOperation(ctx.db, {
      uuid, type: 'REMOTE_VERIFY', status: verified ? 'SUCCESS' : 'MATCH_NOT_FOUND', subjectId, modalities: ['FACE'], score, threshold,
      details: { templateVersion: fresh.templateVersion }, durationMs: Date.now() - started, principal: input.principal,
      surface: input.surface, at: ctx.now(),
    });
    return { verified, score, threshold, operationUuid: uuid, subjectId };
  } catch (e) {
    if (e instanceof DomainError) {
      await recordOperation(ctx.db, {
        uuid, type: 'REMOTE_VERIFY', status: 'FAILED', subjectId, modalities: ['FACE'],
        details: { reason: e.code, detail: e.detail }, durationMs: Date.now() - started, principal: input.principal,
        surface: input.surface, at: ctx.now(),
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

function unprocessable(field: string, message: string) {
  return new DomainError('unprocessable', `${field}: ${message}`, { errors: [{ field, message }] });
}

const round = (x: number) => Math.round(x * 100) / 100;
