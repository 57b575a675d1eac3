import { BiometricError } from '../../biometrics/errors.js';
import { crc32, parseTemplate, TEMPLATE_MAGIC, type Template } from '../../biometrics/template.js';
import type { ServiceContext } from '../context.js';
import { templateKeys } from './keys.js';

/**
 * The signed compact template: a subject's template bytes (format v1) bound to its subjectId and signed by
 * the service with Ed25519, small enough for a QR code. Layout in docs/template-format.md ("Signed envelope").
 */

/** Magic bytes "BIMS" (signed BIMS template). */
export const ENVELOPE_MAGIC = [0x42, 0x49, 0x4d, 0x53] as const;
const ENVELOPE_VERSION = 1;
/** Algorithm code of the signature: 1 = Ed25519. */
const ALG_ED25519 = 1;
const SIGNATURE_BYTES = 64;
/** Bytes before the subjectId: magic 4, version 1, alg 1, key id 4, issued-at 4, subjectId length 2. */
const HEADER_BYTES = 16;

/** A structurally broken envelope or template: the caller answers 400 naming its field. */
export class EnvelopeError extends Error {
  override name = 'EnvelopeError';
}

/** What a signed envelope or bare template holds. */
interface VerifiedTemplate {
  /** Whether the bytes were a signed envelope (false for a bare template). */
  signed: boolean;
  /** True only for an envelope whose Ed25519 signature verifies with one of the service's signing keys. */
  signatureValid: boolean;
  subjectId?: string;
  /** When the envelope was signed. */
  issuedAt?: Date;
  /** Id of the signing key the envelope names. */
  keyId?: string;
  template: Template;
  /** The template bytes (format v1) inside. */
  templateBytes: Uint8Array;
}

/**
 * Sign a template for a subject: the envelope the QR code carries.
 * @example const envelope = await signTemplate(ctx, faceTemplateBytes, 'alice'); // ~650 bytes for a 512-d face
 */
export async function signTemplate(
  ctx: ServiceContext,
  templateBytes: Uint8Array,
  subjectId: string,
): Promise<Uint8Array> {
  parseTemplate(templateBytes); // never sign what cannot be read back
  const key = await templateKeys(ctx).current('template-signing');
  const sid = new TextEncoder().encode(subjectId);
  if (sid.length === 0 || sid.length > 0xffff) throw new EnvelopeError('subjectId must be 1..65535 bytes');
  if (templateBytes.length > 0xffff) throw new EnvelopeError('template too large for an envelope');
  const body = new Uint8Array(HEADER_BYTES + sid.length + 2 + templateBytes.length);
  const dv = new DataView(body.buffer);
  body.set(ENVELOPE_MAGIC, 0);
  body[4] = ENVELOPE_VERSION;
  body[5] = ALG_ED25519;
  body.set(hexBytes(key.id), 6);
  dv.setUint32(10, Math.floor(ctx.now().getTime() / 1000), true);
  dv.setUint16(14, sid.length, true);
  body.set(sid, HEADER_BYTES);
  dv.setUint16(HEADER_BYTES + sid.length, templateBytes.length, true);
  body.set(templateBytes, HEADER_BYTES + sid.length + 2);
  return appendSignature(key.privateKey, body);
}

/** The body followed by its Ed25519 signature (64 bytes), as both envelope versions end. */
export async function appendSignature(privateKey: CryptoKey, body: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const signature = new Uint8Array(await crypto.subtle.sign('Ed25519', privateKey, body));
  const out = new Uint8Array(body.length + SIGNATURE_BYTES);
  out.set(body);
  out.set(signature, body.length);
  return out;
}

/** Whether bytes start like a signed envelope. */
export function isEnvelope(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && ENVELOPE_MAGIC.every((m, i) => bytes[i] === m);
}

/**
 * Read a signed envelope or a bare template and check the signature. A flipped bit anywhere in an envelope
 * gives `signatureValid: false`; if it hit the template, its contents are still reported (read past its
 * CRC) so the caller can see what the bytes claim, but nothing about them is to be trusted.
 * @throws EnvelopeError for bytes that are neither (foreign, truncated, trailing bytes, bad lengths), or a
 *   bare template that fails its own validation.
 */
export async function verifySignedTemplate(ctx: ServiceContext, bytes: Uint8Array): Promise<VerifiedTemplate> {
  if (!isEnvelope(bytes)) {
    if (!TEMPLATE_MAGIC.every((m, i) => bytes[i] === m))
      throw new EnvelopeError('neither a signed BIMS template nor a BIMS template (magic)');
    return { signed: false, signatureValid: false, template: strictTemplate(bytes), templateBytes: bytes };
  }
  if (bytes.length < HEADER_BYTES + 1 + 2 + SIGNATURE_BYTES) throw new EnvelopeError('signed template truncated');
  if (bytes[4] !== ENVELOPE_VERSION) throw new EnvelopeError(`unsupported signed template version ${bytes[4]}`);
  if (bytes[5] !== ALG_ED25519) throw new EnvelopeError(`unknown signature algorithm ${bytes[5]}`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const keyId = hex(bytes.subarray(6, 10));
  const issuedAt = new Date(dv.getUint32(10, true) * 1000);
  const sidLength = dv.getUint16(14, true);
  const tlOffset = HEADER_BYTES + sidLength;
  if (sidLength === 0 || tlOffset + 2 > bytes.length) throw new EnvelopeError('signed template truncated (subjectId)');
  const templateLength = dv.getUint16(tlOffset, true);
  const end = tlOffset + 2 + templateLength;
  if (end + SIGNATURE_BYTES !== bytes.length) {
    throw new EnvelopeError(
      end + SIGNATURE_BYTES > bytes.length ? 'signed template truncated' : 'signed template has trailing bytes',
    );
  }
  let subjectId: string;
  try {
    subjectId = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(HEADER_BYTES, tlOffset));
  } catch {
    throw new EnvelopeError('subjectId is not UTF-8');
  }
  const templateBytes = bytes.slice(tlOffset + 2, end);
  const key = await templateKeys(ctx).find('template-signing', keyId);
  const signatureValid = key
    ? await crypto.subtle.verify('Ed25519', key.publicKey, bytes.slice(end), bytes.slice(0, end))
    : false;
  const template = signatureValid ? strictTemplate(templateBytes) : lenientTemplate(templateBytes);
  return { signed: true, signatureValid, subjectId, issuedAt, keyId, template, templateBytes };
}

function strictTemplate(bytes: Uint8Array): Template {
  try {
    return parseTemplate(bytes);
  } catch (e) {
    if (e instanceof BiometricError) throw new EnvelopeError(e.message);
    throw e;
  }
}

/** Parse a template whose integrity is already known to be lost, past its CRC (structure still checked). */
function lenientTemplate(bytes: Uint8Array): Template {
  const copy = bytes.slice();
  if (copy.length >= 4)
    new DataView(copy.buffer).setUint32(copy.length - 4, crc32(copy.subarray(0, copy.length - 4)), true);
  return strictTemplate(copy);
}

function hex(b: Uint8Array): string {
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
}

function hexBytes(h: string): Uint8Array {
  return Uint8Array.from(h.match(/../g)!.map((x) => parseInt(x, 16)));
}
