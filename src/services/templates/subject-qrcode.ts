import { findSubjectFaceTemplate } from '../../db/repositories/templates.js';
import { DomainError, notFound } from '../errors.js';
import type { Services } from '../index.js';
import { encryptTemplateForDevice } from './encrypted.js';
import { qrMatrix, type QrMatrix } from './qr.js';
import { signTemplate } from './signed.js';

/**
 * What a QR code carries: the signed clear template (`SIGNED_TEMPLATE`, for offline verification by anyone
 * who reads the code) or, when the `qrcode.clearTemplate` setting is off, the encrypted template
 * (`ENCRYPTED_TEMPLATE`, the compact JWE as ASCII: readable by the service only, for remote verification).
 */
type QrPayloadType = 'SIGNED_TEMPLATE' | 'ENCRYPTED_TEMPLATE';

/** A subject's QR code before rendering: the payload, its matrix, and the encrypted template for remote verification. */
interface SubjectQr {
  subjectId: string;
  templateVersion: string;
  payloadType: QrPayloadType;
  /** The bytes the code carries. */
  payload: Uint8Array;
  matrix: QrMatrix;
  /** The same template as a JWE for the service (remoteVerify), too large for the code itself. */
  encryptedTemplate: string;
}

/**
 * The QR code of a subject's compact face template (the `templates` row of modality FACE), signed now, and a
 * new encrypted template bound to the subject's current enrolment. 404 when the subject or its face template
 * does not exist; a conflict (409) when the subject is not ENROLLED: a REJECTED subject duplicates someone
 * and one PENDING_ADJUDICATION may, so neither gets a credential the service vouches for.
 */
export async function subjectQrCode(
  services: Pick<Services, 'ctx' | 'settings'>,
  subjectId: string,
): Promise<SubjectQr> {
  const { ctx } = services;
  // One statement: the subject row the encrypted template is bound to and the template it carries agree.
  const row = await findSubjectFaceTemplate(ctx.db, subjectId);
  if (!row) throw notFound(`Subject '${subjectId}'`);
  if (row.status !== 'ENROLLED') {
    throw new DomainError(
      'conflict',
      `Subject '${row.subject_id}' is ${row.status}: QR codes are issued for ENROLLED subjects only`,
      { subjectStatus: row.status },
    );
  }
  if (!row.data || !row.template_version) throw notFound(`The face template of subject '${subjectId}'`);
  const data = new Uint8Array(row.data);
  const encryptedTemplate = await encryptTemplateForDevice(services, row, data);
  const clear = await services.settings.get('qrcode.clearTemplate');
  const payload = clear ? await signTemplate(ctx, data, row.subject_id) : new TextEncoder().encode(encryptedTemplate);
  return {
    subjectId: row.subject_id,
    templateVersion: row.template_version,
    payloadType: clear ? 'SIGNED_TEMPLATE' : 'ENCRYPTED_TEMPLATE',
    payload,
    matrix: qrMatrix(payload),
    encryptedTemplate,
  };
}
