import { compactVerify, decodeProtectedHeader, importJWK, importSPKI, type CryptoKey } from 'jose';
import { LICENCE_TYP, LicenceDocument, UPDATE_TYP, UpdatePackage } from './document.js';

/** Why a signed document was refused; `INVALID_SIGNATURE` also covers a document signed with a foreign key. */
type SignatureProblem = 'INVALID_SIGNATURE' | 'MALFORMED';

export class LicenceDocumentError extends Error {
  override name = 'LicenceDocumentError';
  constructor(
    readonly problem: SignatureProblem,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The licensing public key from configuration: a JWK (JSON, OKP/Ed25519) or an SPKI PEM. Accepting both
 * lets operators paste whatever `npm run licence -- keygen` printed.
 */
export async function importLicenceKey(text: string): Promise<CryptoKey> {
  const trimmed = text.trim();
  try {
    if (trimmed.startsWith('{')) {
      const jwk = JSON.parse(trimmed) as Record<string, unknown>;
      if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || 'd' in jwk)
        throw new Error('expected a public OKP Ed25519 JWK');
      return (await importJWK(jwk, 'EdDSA')) as CryptoKey;
    }
    // Environment variables often carry PEM with literal "\n".
    return await importSPKI(trimmed.replace(/\\n/g, '\n'), 'EdDSA');
  } catch (error) {
    throw new Error(
      `BIMS_LICENCE_PUBLIC_KEY is neither an Ed25519 public JWK nor an SPKI PEM: ${(error as Error).message}`,
    );
  }
}

/** Verify a compact JWS of the given `typ` and return its JSON payload. */
async function verifiedPayload(jws: string, key: CryptoKey, typ: string): Promise<unknown> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(jws.trim());
  } catch {
    throw new LicenceDocumentError('MALFORMED', 'not a compact JWS');
  }
  if (header.alg !== 'EdDSA' && header.alg !== 'Ed25519')
    throw new LicenceDocumentError('MALFORMED', `unexpected algorithm ${String(header.alg)}`);
  if (header.typ !== typ)
    throw new LicenceDocumentError('MALFORMED', `expected a ${typ} document, got ${String(header.typ ?? 'none')}`);
  let payload: Uint8Array;
  try {
    ({ payload } = await compactVerify(jws.trim(), key, { algorithms: ['EdDSA', 'Ed25519'] }));
  } catch {
    throw new LicenceDocumentError(
      'INVALID_SIGNATURE',
      'the signature does not verify with the configured licensing public key',
    );
  }
  try {
    return JSON.parse(new TextDecoder().decode(payload));
  } catch {
    throw new LicenceDocumentError('MALFORMED', 'the payload is not JSON');
  }
}

/**
 * Check a licence's signature and shape. Time is judged apart ({@link licenceTimeState}) so that an expired
 * licence can still be reported for what it says.
 */
export async function verifyLicence(jws: string, key: CryptoKey): Promise<LicenceDocument> {
  const parsed = LicenceDocument.safeParse(await verifiedPayload(jws, key, LICENCE_TYP));
  if (!parsed.success)
    throw new LicenceDocumentError(
      'MALFORMED',
      `not a licence: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

/** Check a dongle update's signature and shape (the dongle then judges its id, sequence and nonce). */
export async function verifyUpdate(jws: string, key: CryptoKey): Promise<UpdatePackage> {
  const parsed = UpdatePackage.safeParse(await verifiedPayload(jws, key, UPDATE_TYP));
  if (!parsed.success)
    throw new LicenceDocumentError(
      'MALFORMED',
      `not a dongle update: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

/** Whether a verified licence is in force at `now`. */
export function licenceTimeState(licence: LicenceDocument, now: Date): 'VALID' | 'EXPIRED' | 'NOT_YET_VALID' {
  if (now.getTime() < Date.parse(licence.notBefore)) return 'NOT_YET_VALID';
  if (now.getTime() >= Date.parse(licence.expiresAt)) return 'EXPIRED';
  return 'VALID';
}
