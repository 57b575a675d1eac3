import { BiometricError } from '../../biometrics/errors.js';
import { parseTemplate, type Template } from '../../biometrics/template.js';
import type { ServiceContext } from '../context.js';
import { templateKeys } from './keys.js';
import { ENVELOPE_MAGIC, EnvelopeError, appendSignature } from './signed.js';

/**
 * The bound envelope (signed envelope version 2): a subject's template signed by the service together with
 * the enrolment it was issued for (the subject's internal id and enrolment operation), when it was issued
 * and until when it is good. It is the plaintext of every encrypted template (JWE) the service hands out for
 * remote verification, and never travels in clear. The binding is inside the signature because the JWE's
 * encryption key is public: anyone can encrypt anything, even a validly signed QR code envelope (version 1,
 * which binds nothing and is refused), under any protected header. Binary rather than a JWS so that the JWE
 * stays small enough for a QR code (about 1.3 KB for a face instead of 2.2 KB: a JWS inside a JWE is
 * base64url-encoded twice). Layout in docs/template-format.md ("Bound envelope v2").
 */

const BOUND_ENVELOPE_VERSION = 2;
const ALG_ED25519 = 1;
const SIGNATURE_BYTES = 64;
/** Bytes before the subjectId: magic 4, version 1, alg 1, key id 4, issued 4, expires 4, subject ref 4, enrolment uuid 16, length 2. */
const HEADER_BYTES = 40;

/** The enrolment a template is issued for: the subject's row as it is when issued. */
export interface TemplateIssue {
  /** subjects.id: a new row for every enrolment, so a deleted and re-enrolled subjectId gets another. */
  id: number;
  subject_id: string;
  enrollment_operation_uuid: string | null;
}

/** What a verified bound envelope holds. */
export interface BoundTemplate {
  subjectId: string;
  subjectRef: number;
  /** The enrolment operation, null for a subject stored without one. */
  enrollmentUuid: string | null;
  issuedAt: Date;
  /** Null when it never expires. */
  expiresAt: Date | null;
  template: Template;
  templateBytes: Uint8Array;
}

/**
 * Sign a template bound to the enrolment it is issued for.
 * @param ttlSeconds lifetime from now; 0 for no expiry.
 */
export async function signBoundTemplate(
  ctx: ServiceContext,
  issue: TemplateIssue,
  templateBytes: Uint8Array,
  ttlSeconds: number,
): Promise<Uint8Array> {
  parseTemplate(templateBytes); // never sign what cannot be read back
  const key = await templateKeys(ctx).current('template-signing');
  const sid = new TextEncoder().encode(issue.subject_id);
  if (sid.length === 0 || sid.length > 0xffff) throw new EnvelopeError('subjectId must be 1..65535 bytes');
  if (templateBytes.length > 0xffff) throw new EnvelopeError('template too large for an envelope');
  const issuedAt = Math.floor(ctx.now().getTime() / 1000);
  const body = new Uint8Array(HEADER_BYTES + sid.length + 2 + templateBytes.length);
  const dv = new DataView(body.buffer);
  body.set(ENVELOPE_MAGIC, 0);
  body[4] = BOUND_ENVELOPE_VERSION;
  body[5] = ALG_ED25519;
  body.set(hexBytes(key.id), 6);
  dv.setUint32(10, issuedAt, true);
  dv.setUint32(14, ttlSeconds > 0 ? issuedAt + ttlSeconds : 0, true);
  dv.setUint32(18, issue.id, true);
  if (issue.enrollment_operation_uuid) body.set(hexBytes(issue.enrollment_operation_uuid.replaceAll('-', '')), 22);
  dv.setUint16(38, sid.length, true);
  body.set(sid, HEADER_BYTES);
  dv.setUint16(HEADER_BYTES + sid.length, templateBytes.length, true);
  body.set(templateBytes, HEADER_BYTES + sid.length + 2);
  return appendSignature(key.privateKey, body);
}

/** Whether bytes start like a bound envelope (magic and version; nothing is verified). */
export function isBoundEnvelope(bytes: Uint8Array): boolean {
  return bytes.length > 4 && ENVELOPE_MAGIC.every((m, i) => bytes[i] === m) && bytes[4] === BOUND_ENVELOPE_VERSION;
}

/**
 * Read a bound envelope and verify its signature.
 * @returns the contents, or null when the signature does not verify with any of the service's signing keys.
 * @throws EnvelopeError for bytes that are not a well-formed bound envelope.
 */
export async function verifyBoundTemplate(ctx: ServiceContext, bytes: Uint8Array): Promise<BoundTemplate | null> {
  if (!isBoundEnvelope(bytes)) throw new EnvelopeError('not a bound template envelope');
  if (bytes.length < HEADER_BYTES + 1 + 2 + SIGNATURE_BYTES) throw new EnvelopeError('bound template truncated');
  if (bytes[5] !== ALG_ED25519) throw new EnvelopeError(`unknown signature algorithm ${bytes[5]}`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const sidLength = dv.getUint16(38, true);
  const tlOffset = HEADER_BYTES + sidLength;
  if (sidLength === 0 || tlOffset + 2 > bytes.length) throw new EnvelopeError('bound template truncated (subjectId)');
  const end = tlOffset + 2 + dv.getUint16(tlOffset, true);
  if (end + SIGNATURE_BYTES !== bytes.length) throw new EnvelopeError('bound template has a wrong length');
  const key = await templateKeys(ctx).find('template-signing', hex(bytes.subarray(6, 10)));
  if (!key || !(await crypto.subtle.verify('Ed25519', key.publicKey, bytes.slice(end), bytes.slice(0, end))))
    return null;
  // Signed by the service, hence well-formed from here on; still parsed strictly.
  const templateBytes = bytes.slice(tlOffset + 2, end);
  let template: Template;
  try {
    template = parseTemplate(templateBytes);
  } catch (e) {
    if (e instanceof BiometricError) throw new EnvelopeError(e.message);
    throw e;
  }
  const uuid = hex(bytes.subarray(22, 38));
  const expires = dv.getUint32(14, true);
  return {
    subjectId: new TextDecoder().decode(bytes.subarray(HEADER_BYTES, tlOffset)),
    subjectRef: dv.getUint32(18, true),
    enrollmentUuid: /^0+$/.test(uuid)
      ? null
      : `${uuid.slice(0, 8)}-${uuid.slice(8, 12)}-${uuid.slice(12, 16)}-${uuid.slice(16, 20)}-${uuid.slice(20)}`,
    issuedAt: new Date(dv.getUint32(10, true) * 1000),
    expiresAt: expires ? new Date(expires * 1000) : null,
    template,
    templateBytes,
  };
}

function hex(b: Uint8Array): string {
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
}

function hexBytes(h: string): Uint8Array {
  return Uint8Array.from(h.match(/../g)!.map((x) => parseInt(x, 16)));
}
