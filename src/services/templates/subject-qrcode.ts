import type { ServiceContext } from '../context.js';
import { notFound } from '../errors.js';
import { encryptTemplateForDevice } from './encrypted.js';
import { qrMatrix, type QrMatrix } from './qr.js';
import { signTemplate } from './signed.js';

/** A subject's QR code before rendering: the signed envelope, its matrix, and the encrypted template for remote verification. */
export interface SubjectQr {
  subjectId: string;
  templateVersion: string;
  /** The signed envelope the code carries. */
  payload: Uint8Array;
  matrix: QrMatrix;
  /** The same template as a JWE for the service (remoteVerify), too large for the code itself. */
  encryptedTemplate: string;
}

/**
 * The QR code of a subject's compact face template (the `templates` row of modality FACE), signed now.
 * 404 when the subject or its face template does not exist.
 */
export async function subjectQrCode(ctx: ServiceContext, subjectId: string): Promise<SubjectQr> {
  const subject = await ctx.db.selectFrom('subjects').select(['id', 'subject_id']).where('subject_id', '=', subjectId).executeTakeFirst();
  if (!subject) throw notFound(`Subject '${subjectId}'`);
  const row = await ctx.db
    .selectFrom('templates')
    .select(['data', 'template_version'])
    .where('subject_ref', '=', subject.id)
    .where('modality', '=', 'FACE')
    .orderBy('id', 'desc')
    .executeTakeFirst();
  if (!row) throw notFound(`The face template of subject '${subjectId}'`);
  const data = new Uint8Array(row.data);
  const payload = await signTemplate(ctx, data, subject.subject_id);
  return {
    subjectId: subject.subject_id,
    templateVersion: row.template_version,
    payload,
    matrix: qrMatrix(payload),
    encryptedTemplate: await encryptTemplateForDevice(ctx, subject.subject_id, data),
  };
}
