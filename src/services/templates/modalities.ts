import type { Template } from '../../biometrics/index.js';
import type { ServiceContext } from '../context.js';
import { invalid } from '../errors.js';
import { EnvelopeError, verifySignedTemplate } from './signed.js';

/** Modality names of the interface for template records. */
export function modalitiesOf(t: Template): ('FACE' | 'VOICE')[] {
  const names = t.records.map((r) => (r.modality === 'face' ? 'FACE' : 'VOICE') as 'FACE' | 'VOICE');
  return [...new Set(names)];
}

/**
 * `getTemplateModalities`: what a bare template or a signed QR payload holds, and whether the service's
 * signature on it is valid. Bytes that are neither are a 400 naming `field`.
 */
export async function templateModalities(ctx: ServiceContext, bytes: Uint8Array, field: string) {
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
