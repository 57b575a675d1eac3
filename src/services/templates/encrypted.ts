import { CompactEncrypt, compactDecrypt, decodeProtectedHeader } from 'jose';
import { parseTemplate } from '../../biometrics/template.js';
import type { ServiceContext } from '../context.js';
import { DomainError } from '../errors.js';
import type { SettingsService } from '../settings/settings.js';
import {
  isBoundEnvelope,
  signBoundTemplate,
  verifyBoundTemplate,
  type BoundTemplate,
  type TemplateIssue,
} from './bound.js';
import { templateKeys } from './keys.js';
import { isEnvelope, verifySignedTemplate, EnvelopeError } from './signed.js';

/**
 * Enrolled templates that travel to a device for remote verification, readable by the service only: a compact
 * JWE (ECDH-ES+A256KW on P-256, A256GCM) for the service's encryption key, whose plaintext is the signed
 * bound envelope (src/services/templates/bound.ts: subjectId, the enrolment it was issued for, issue and
 * expiry times, template, Ed25519 signature). The signature matters because the encryption key is public by
 * nature: anyone holding it could encrypt a template of their choice, but only the service can sign one, and
 * only what is signed binds (the protected header does not). The protected header names the template version
 * so a device can tell whether its SDK matches.
 */

const JWE_TYPE = 'bims-template+jwe';
const ENC = 'A256GCM';
const FIELD = 'body.encryptedTemplate';

/** Seconds in a day, for the `remoteVerify.encryptedTemplateTtlDays` setting. */
const DAY_SECONDS = 86_400;

/**
 * Encrypt a subject's template for the service itself, to be handed to the subject's device (at enrolment,
 * or with the QR code), bound to the enrolment of `issue` (the subject's row) and expiring after the
 * `remoteVerify.encryptedTemplateTtlDays` setting (0: never).
 * @example const jwe = await encryptTemplateForDevice(services, subjectRow, faceTemplateBytes);
 */
export async function encryptTemplateForDevice(
  services: { ctx: ServiceContext; settings: Pick<SettingsService, 'get'> },
  issue: TemplateIssue,
  templateBytes: Uint8Array,
): Promise<string> {
  const { ctx } = services;
  const { templateVersion } = parseTemplate(templateBytes);
  const ttlDays = await services.settings.get('remoteVerify.encryptedTemplateTtlDays');
  const envelope = await signBoundTemplate(ctx, issue, templateBytes, ttlDays * DAY_SECONDS);
  const key = await templateKeys(ctx).current('template-encryption');
  return new CompactEncrypt(envelope)
    .setProtectedHeader({ alg: key.alg, enc: ENC, kid: key.id, typ: JWE_TYPE, tv: templateVersion })
    .encrypt(key.publicKey);
}

/**
 * Decrypt a JWE made by {@link encryptTemplateForDevice} and check the signature and binding inside (whether
 * the binding still holds is the caller's to check against the database).
 * @throws DomainError validation (400) for a malformed JWE; unprocessable (422) for one that does not
 *   decrypt with any service key (tampered, foreign, unknown key) or whose contents the service did not sign
 *   (reason TEMPLATE_INVALID), or a genuine one of the unbound format made before templates were bound to
 *   their enrolment (reason TEMPLATE_UNBOUND).
 */
export async function decryptDeviceTemplate(ctx: ServiceContext, jwe: string): Promise<BoundTemplate> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(jwe);
  } catch {
    throw fail('validation', 'is not a compact JWE (unreadable protected header)');
  }
  if (header.typ !== JWE_TYPE || typeof header.kid !== 'string')
    throw fail('unprocessable', 'was not made by this service');
  const key = await templateKeys(ctx).find('template-encryption', header.kid);
  if (!key) throw fail('unprocessable', 'names a key this service does not have');
  let plaintext: Uint8Array;
  try {
    ({ plaintext } = await compactDecrypt(jwe, key.privateKey, {
      keyManagementAlgorithms: [key.alg],
      contentEncryptionAlgorithms: [ENC],
    }));
  } catch {
    throw fail('unprocessable', 'cannot be decrypted with the service key (tampered or foreign)');
  }
  try {
    if (isBoundEnvelope(plaintext)) {
      const bound = await verifyBoundTemplate(ctx, plaintext);
      if (!bound) throw fail('unprocessable', 'holds a template the service did not sign');
      return bound;
    }
    // A signed envelope of version 1 binds nothing: the JWE predates binding, or someone encrypted a QR code's
    // envelope. Either way it proves no enrolment; a service-signed one gets the precise reason.
    const unbound = isEnvelope(plaintext) ? await verifySignedTemplate(ctx, plaintext) : undefined;
    if (unbound?.signatureValid) {
      throw fail(
        'unprocessable',
        'is of an older format not bound to its enrolment and no longer verifies; fetch a new one (the QR code answer carries one)',
        'TEMPLATE_UNBOUND',
      );
    }
    throw fail('unprocessable', 'holds a template the service did not sign');
  } catch (e) {
    if (e instanceof EnvelopeError) throw fail('unprocessable', `holds no valid signed template: ${e.message}`);
    throw e;
  }
}

/** Reason code of any encrypted template the service cannot vouch for (foreign, tampered, unsigned). */
const INVALID = 'TEMPLATE_INVALID';

function fail(code: 'validation' | 'unprocessable', message: string, reason = INVALID) {
  return new DomainError(code, `${FIELD}: ${message}`, { errors: [{ field: FIELD, message }], reason });
}
