import { describe, expect, it } from 'vitest';
import { exportJWK } from 'jose';
import { generateLicenceKeys, issueLicence, issueUpdate } from './issue.js';
import { periodKey, periodStartOf } from './periods.js';
import { importLicenceKey, LicenceDocumentError, licenceTimeState, verifyLicence, verifyUpdate } from './verify.js';
import type { LicenceDocument } from './document.js';

const terms = (over: Partial<LicenceDocument> = {}): LicenceDocument => ({
  licenceId: 'LIC-1',
  licensee: 'Acme',
  source: 'INTERNET',
  modalities: ['FACE'],
  quotas: { ENROLL: { period: 'MONTH', limit: 1000 } },
  notBefore: '2026-01-01T00:00:00Z',
  expiresAt: '2027-01-01T00:00:00Z',
  ...over,
});

async function refusal(promise: Promise<unknown>): Promise<LicenceDocumentError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LicenceDocumentError);
  return error as LicenceDocumentError;
}

describe('licence verification', async () => {
  const vendor = await generateLicenceKeys();
  const stranger = await generateLicenceKeys();

  it('accepts a licence signed with the configured key, given as JWK or as PEM', async () => {
    const jws = await issueLicence(terms(), vendor.privateKey);
    for (const text of [JSON.stringify(vendor.publicJwk), vendor.publicPem, vendor.publicPem.replace(/\n/g, '\\n')]) {
      const licence = await verifyLicence(jws, await importLicenceKey(text));
      expect(licence).toMatchObject({
        licenceId: 'LIC-1',
        licensee: 'Acme',
        quotas: { ENROLL: { period: 'MONTH', limit: 1000 } },
      });
    }
  });

  it('refuses a tampered payload (bad signature) and a licence signed with a foreign key', async () => {
    const jws = await issueLicence(terms(), vendor.privateKey);
    const [header, , signature] = jws.split('.');
    const forged = Buffer.from(JSON.stringify({ ...terms(), quotas: {} })).toString('base64url');
    expect((await refusal(verifyLicence(`${header}.${forged}.${signature}`, vendor.publicKey))).problem).toBe(
      'INVALID_SIGNATURE',
    );
    const foreign = await issueLicence(terms(), stranger.privateKey);
    expect((await refusal(verifyLicence(foreign, vendor.publicKey))).problem).toBe('INVALID_SIGNATURE');
  });

  it('judges time apart: valid, expired, not yet valid', async () => {
    const licence = await verifyLicence(await issueLicence(terms(), vendor.privateKey), vendor.publicKey);
    expect(licenceTimeState(licence, new Date('2026-06-01T00:00:00Z'))).toBe('VALID');
    expect(licenceTimeState(licence, new Date('2027-01-01T00:00:00Z'))).toBe('EXPIRED');
    expect(licenceTimeState(licence, new Date('2025-12-31T23:59:59Z'))).toBe('NOT_YET_VALID');
  });

  it('does not take an update for a licence nor the reverse, nor garbage', async () => {
    const licence = await issueLicence(terms(), vendor.privateKey);
    const update = await issueUpdate({ dongleId: 'SW-1', sequence: 1, licence }, vendor.privateKey);
    expect((await refusal(verifyLicence(update, vendor.publicKey))).problem).toBe('MALFORMED');
    expect((await refusal(verifyUpdate(licence, vendor.publicKey))).problem).toBe('MALFORMED');
    expect((await refusal(verifyLicence('not a jws', vendor.publicKey))).problem).toBe('MALFORMED');
    expect(await verifyUpdate(update, vendor.publicKey)).toMatchObject({
      dongleId: 'SW-1',
      sequence: 1,
      licence,
      nonce: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
  });

  it('refuses a private key or a non-Ed25519 key as the public key', async () => {
    await expect(importLicenceKey(JSON.stringify(await exportJWK(vendor.privateKey)))).rejects.toThrow(
      /public OKP Ed25519/,
    );
    await expect(importLicenceKey('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----')).rejects.toThrow(
      /BIMS_LICENCE_PUBLIC_KEY/,
    );
  });

  it('the issuing tool refuses a licence BIMS would refuse', async () => {
    await expect(issueLicence({ ...terms(), modalities: [] }, vendor.privateKey)).rejects.toThrow();
  });
});

describe('usage periods', () => {
  it('keys counters by UTC day, UTC month or the whole life', () => {
    const at = new Date('2026-11-30T23:30:00-02:00');
    expect(periodKey('DAY', at)).toBe('DAY:2026-12-01');
    expect(periodKey('MONTH', at)).toBe('MONTH:2026-12');
    expect(periodKey('TOTAL', at)).toBe('TOTAL');
    expect(periodStartOf('DAY:2026-12-01')?.toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(periodStartOf('MONTH:2026-12')?.toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(periodStartOf('TOTAL')).toBeNull();
  });
});
