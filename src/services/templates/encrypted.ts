import { CompactEncrypt, compactDecrypt, decodeProtectedHeader } from 'jose';
import { parseTemplate } from '../../biometrics/index.js';
import type { ServiceContext } from '../context.js';
import { DomainError } from '../errors.js';
import { templateKeys } from './keys.js';
import { signTemplate, verifySignedTemplate, EnvelopeError, type VerifiedTemplate } from './signed.js';

/**
 * Enrolled templates that travel to a device for remote verification, readable by the service only: a compact
 * JWE (ECDH-ES+A256KW on P-256, A256GCM) for the service's encryption key, whose plaintext is the signed
 * envelope (subjectId + template + Ed25519 signature). The signature matters because the encryption key is
 * public by nature: anyone holding it could encrypt a template of their choice, but only the service can
 * sign one. The protected header names the template version so a device can tell whether its SDK matches.
 */

export const JWE_TYPE = 'bims-template+jwe';
const ENC = 'A256GCM';
const FIELD = 'body.encryptedTemplate';

/**
 * Encrypt a subject's template for the service itself, to be handed to the subject's device (at enrolment,
 * export, or with the QR code).
 * @example const jwe = await encryptTemplateForDevice(ctx, 'alice', faceTemplateBytes);
 */
export async function encryptTemplateForDevice(ctx: ServiceContext, subjectId: string, templateBytes: Uint8Array): Promise<string> {
  const { templateVersion } = parseTemplate(templateBytes);
  const envelope = await signTemplate(ctx, templateBytes, subjectId);
  const key = await templateKeys(ctx).current('template-encryption');
  return new CompactEncrypt(envelope)
    .setProtectedHeader({ alg: key.alg, enc: ENC, kid: key.id, typ: JWE_TYPE, tv: templateVersion })
    .encrypt(key.publicKey);
}

/**
 * Decrypt a JWE made by {@link encryptTemplateForDevice} and check the signature inside.
 * @throws DomainError validation (400) for a malformed JWE; unprocessable (422) for one that does not
 *   decrypt with any service key (tampered, foreign, unknown key) or whose contents the service did not sign.
 */
export async function decryptDeviceTemplate(ctx: ServiceContext, jwe: string): Promise<VerifiedTemplate> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(jwe);
  } catch {
    throw fail('validation', 'is not a compact JWE (unreadable protected header)');
  }
  if (header.typ !== JWE_TYPE || typeof header.kid !== 'string') throw fail('unprocessable', 'was not made by this service');
  const key = await templateKeys(ctx).find('template-encryption', header.kid);
  if (!key) throw fail('unprocessable', 'names a key this service does not have');
  let plaintext: Uint8Array;
  try {
    ({ plaintext } = await compactDecrypt(jwe, key.privateKey, { keyManagementAlgorithms: [key.alg], contentEncryptionAlgorithms: [ENC] }));
  } catch {
    throw fail('unprocessable', 'cannot be decrypted with the service key (tampered or foreign)');
  }
  let verified: VerifiedTemplate;
  try {
    verified = await verifySignedTemplate(ctx, plaintext);
  } catch (e) {
    if (e instanceof EnvelopeError) throw fail('unprocessable', `holds no valid signed template: ${e.message}`);
    throw e;
  }
  if (!verified.signed || !verified.signatureValid) throw fail('unprocessable', 'holds a template the service did not sign');
  return verified;
}

function fail(code: 'validation' | 'unprocessable', message: string) {
  return new DomainError(code, `${FIELD}: ${message}`, { errors: [{ field: FIELD, message }] });
}
