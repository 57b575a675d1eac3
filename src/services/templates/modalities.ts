import type { Template } from '../../biometrics/template.js';
import type { ServiceContext } from '../context.js';
import { DomainError, invalid } from '../errors.js';
import { decryptDeviceTemplate } from './encrypted.js';
import { EnvelopeError, verifySignedTemplate } from './signed.js';

/** Modality names of the interface for template records. */
function modalitiesOf(t: Template): ('FACE' | 'VOICE')[] {
  const names = t.records.map((r) => (r.modality === 'face' ? 'FACE' : 'VOICE') as 'FACE' | 'VOICE');
  return [...new Set(names)];
}

/**
 * `getTemplateModalities`: what a bare template or a signed QR payload holds, and whether the service's
 * signature on it is valid. Bytes that are neither are a 400 naming `field`. A QR payload may also be an
 * encrypted template (the JWE text, when clear templates in QR codes are turned off): the service opens it
 * and reports what it holds, or refuses one it cannot vouch for with 422 naming `field`.
 */
export async function templateModalities(ctx: ServiceContext, bytes: Uint8Array, field: string) {
  if (looksLikeJwe(bytes)) return encryptedTemplateModalities(ctx, new TextDecoder().decode(bytes), field);
  try {
    const v = await verifySignedTemplate(ctx, bytes);
    return {
      modalities: modalitiesOf(v.template),
      templateVersion: v.template.templateVersion,
      formatVersion: v.template.formatVersion,
      ...(v.subjectId !== undefined ? { subjectId: v.subjectId } : {}),
      ...(v.issuedAt ? { issuedAt: v.issuedAt.toISOString() } : {}),
      signed: v.signed,
      signatureValid: v.signatureValid,
    };
  } catch (e) {
    if (e instanceof EnvelopeError) throw invalid(field, e.message);
    throw e;
  }
}

/** A compact JWE in ASCII: five base64url parts, a JSON header first (`eyJ` is `{"` encoded). */
function looksLikeJwe(bytes: Uint8Array): boolean {
  if (bytes.length < 20 || bytes[0] !== 0x65 || bytes[1] !== 0x79 || bytes[2] !== 0x4a) return false;
  let dots = 0;
  for (const b of bytes) {
    if (b === 0x2e) dots++;
    else if (
      !((b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x2d || b === 0x5f)
    )
      return false;
  }
  return dots === 4;
}

async function encryptedTemplateModalities(ctx: ServiceContext, jwe: string, field: string) {
  try {
    const t = await decryptDeviceTemplate(ctx, jwe);
    return {
      modalities: modalitiesOf(t.template),
      templateVersion: t.template.templateVersion,
      formatVersion: t.template.formatVersion,
      subjectId: t.subjectId,
      issuedAt: t.issuedAt.toISOString(),
      ...(t.expiresAt ? { expiresAt: t.expiresAt.toISOString() } : {}),
      signed: true,
      signatureValid: true,
      encrypted: true,
    };
  } catch (e) {
    // The decryption names remoteVerify's field; here the bytes came in `field`.
    if (e instanceof DomainError && e.extras.errors?.length) {
      const message = e.extras.errors[0]!.message;
      throw new DomainError(e.code, `${field}: ${message}`, {
        errors: [{ field, message }],
        ...(e.extras.reason ? { reason: e.extras.reason } : {}),
      });
    }
    throw e;
  }
}
