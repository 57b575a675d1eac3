import {
  CompactSign,
  exportJWK,
  exportPKCS8,
  exportSPKI,
  generateKeyPair,
  importJWK,
  importPKCS8,
  type CryptoKey,
  type JWK,
} from 'jose';
import { LICENCE_TYP, LicenceDocument, UPDATE_TYP, UpdatePackage } from './document.js';

/**
 * The vendor's side of licensing: make a key pair, sign licences and dongle updates. Used by
 * `npm run licence` and by the tests; the service itself only ever holds the public key.
 */

/** A fresh Ed25519 key pair, as PEM and JWK (either form of the public key works in BIMS_LICENCE_PUBLIC_KEY). */
export async function generateLicenceKeys(): Promise<{
  privatePem: string;
  publicPem: string;
  publicJwk: JWK;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const { kty, crv, x } = await exportJWK(publicKey);
  return {
    privatePem: await exportPKCS8(privateKey),
    publicPem: await exportSPKI(publicKey),
    publicJwk: { kty, crv, x },
    privateKey,
    publicKey,
  };
}

/** The signing key from a PKCS#8 PEM or a private JWK. */
export async function importSigningKey(text: string): Promise<CryptoKey> {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) return (await importJWK(JSON.parse(trimmed) as JWK, 'EdDSA')) as CryptoKey;
  return importPKCS8(trimmed, 'EdDSA');
}

async function sign(payload: unknown, typ: string, key: CryptoKey): Promise<string> {
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: 'EdDSA', typ })
    .sign(key);
}

/** Sign a licence (checked against the document schema first, so the tool cannot issue one BIMS would refuse). */
export async function issueLicence(input: LicenceDocument, key: CryptoKey): Promise<string> {
  return sign(LicenceDocument.parse(input), LICENCE_TYP, key);
}

/** Sign a dongle update carrying `licence` for `dongleId`; the nonce is random unless given. */
export async function issueUpdate(
  input: Omit<UpdatePackage, 'nonce' | 'issuedAt'> & Partial<Pick<UpdatePackage, 'nonce' | 'issuedAt'>>,
  key: CryptoKey,
): Promise<string> {
  const nonce =
    input.nonce ?? [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
  return sign(
    UpdatePackage.parse({ ...input, nonce, issuedAt: input.issuedAt ?? new Date().toISOString() }),
    UPDATE_TYP,
    key,
  );
}
