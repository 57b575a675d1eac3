import { toBase64 } from '../encoding/base64.js';
import { templateModalities } from '../services/templates/modalities.js';
import { qrPng, qrSvg } from '../services/templates/qr.js';
import { remoteVerify } from '../services/templates/remote-verify.js';
import { subjectQrCode } from '../services/templates/subject-qrcode.js';
import { preferredType } from './content-negotiation.js';
import { jsonAnswer, mediaAnswer, type HandlerInput } from './types.js';
import type { z } from 'zod';
import type { GetTemplateModalitiesRequest, SubjectQRCode } from '../schemas/subjects.js';
import type { SubjectIdLowerParams } from '../schemas/subject-queries.js';
import type { RemoteVerifyRequest } from '../schemas/operations.js';

/**
 * Handlers of the template operations (QR code, template modalities, remote verification): they adapt HTTP
 * (base64 fields, content negotiation) to the services in services/templates, which know nothing of HTTP.
 */

/** QR codes carry a biometric template: never cached by browsers or proxies. */
const NO_STORE = { 'Cache-Control': 'no-store', Vary: 'Accept' };

/** `getSubjectsQRCodeBySubjectId`: PNG by default, SVG or the SubjectQRCode JSON when the Accept header prefers them. */
export async function handleSubjectQrCode({
  services,
  params,
  request,
}: HandlerInput<{ params: typeof SubjectIdLowerParams }>) {
  const qr = await subjectQrCode(services, params.subjectid);
  const type = preferredType(request.headers.get('accept'), ['image/png', 'image/svg+xml', 'application/json']);
  if (type === 'image/svg+xml')
    return mediaAnswer('image/svg+xml', qrSvg(qr.matrix), { charset: 'utf-8', headers: NO_STORE });
  const png = qrPng(qr.matrix);
  if (type === 'application/json') {
    const answer: z.input<typeof SubjectQRCode> = {
      subjectId: qr.subjectId,
      templateVersion: qr.templateVersion,
      payloadType: qr.payloadType,
      payload: toBase64(qr.payload),
      image: toBase64(png),
      qrVersion: qr.matrix.version,
      encryptedTemplate: qr.encryptedTemplate,
    };
    return jsonAnswer(answer, NO_STORE);
  }
  return mediaAnswer('image/png', png as Uint8Array<ArrayBuffer>, { headers: NO_STORE });
}

/** `getTemplateModalities`: a base64 template (`template`) or QR payload (`payload`). */
export function handleTemplateModalities({
  services,
  body,
}: HandlerInput<{ body: typeof GetTemplateModalitiesRequest }>) {
  const field = body.payload !== undefined ? 'body.payload' : 'body.template';
  // The schema admits exactly one of the two, so one is present.
  return templateModalities(services.ctx, (body.payload ?? body.template)!, field);
}

/** `remoteVerify`. */
export function handleRemoteVerify({
  services,
  body,
  principal,
  surface,
}: HandlerInput<{ body: typeof RemoteVerifyRequest }>) {
  return remoteVerify(services, {
    template: body.template,
    encryptedTemplate: body.encryptedTemplate,
    subjectId: body.subjectId,
    principal,
    surface,
  });
}
