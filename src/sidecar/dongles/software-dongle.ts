import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CompactSign, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { DUMP_TYP, type DongleCounter, type DongleUpdateState } from '../../licensing/document.js';
import { LicenceDocumentError, verifyLicence, verifyUpdate } from '../../licensing/verify.js';

/** The state of the last update a dongle was given (the API reads the same type through its client). */
export type UpdateState = DongleUpdateState;

/** What the dongle file holds. The private key signs dumps, so a vendor can tell a dump came from this dongle. */
interface DongleFile {
  format: 1;
  id: string;
  serial: string;
  createdAt: string;
  privateJwk: JWK;
  publicJwk: JWK;
  licence: string | null;
  counters: DongleCounter[];
  countersAt: string | null;
  lastSequence: number;
  /** Nonces of applied updates (the last 1000), so the same package is never applied twice. */
  nonces: string[];
  update: UpdateState;
}

/** Nonces kept; sequences guard against older packages beyond that. */
const NONCES_KEPT = 1000;

/**
 * The file-backed dongle the sidecar offers when no hardware key is present: a JSON file in the sidecar's
 * data directory, created on first use with a fresh identity and key pair. It behaves as a hardware key
 * would for the vendor (signed dumps, signed updates checked for id, sequence and nonce), but is reported
 * everywhere as `software: true`: it is as safe as the file system it lives on.
 */
export class SoftwareDongle {
  private state: DongleFile | null = null;
  /** Updates and dumps one at a time, so two updates cannot both pass the replay check. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly path: string;

  constructor(private readonly dir: string) {
    this.path = join(dir, 'software-dongle.json');
  }

  private async load(): Promise<DongleFile> {
    if (this.state) return this.state;
    const text = await readFile(this.path, 'utf8').catch((e: NodeJS.ErrnoException) =>
      e.code === 'ENOENT' ? null : Promise.reject(e),
    );
    if (text) return (this.state = JSON.parse(text) as DongleFile);
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const id = `SW-${randomBytes(6).toString('hex').toUpperCase()}`;
    this.state = {
      format: 1,
      id,
      serial: randomBytes(8).toString('hex').toUpperCase(),
      createdAt: new Date().toISOString(),
      privateJwk: await exportJWK(privateKey),
      publicJwk: await exportJWK(publicKey),
      licence: null,
      counters: [],
      countersAt: null,
      lastSequence: 0,
      nonces: [],
      update: { state: 'IDLE' },
    };
    await this.save();
    return this.state;
  }

  /** Write to a temporary file and rename, so a crash never leaves half a dongle. */
  private async save(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.path}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify(this.state, null, 2), { mode: 0o600 });
    await rename(tmp, this.path);
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => {});
    return run;
  }

  /** The dongle as the sidecar reports it (no private key). */
  async describe() {
    const s = await this.load();
    return {
      id: s.id,
      serial: s.serial,
      software: true as const,
      present: true,
      firmwareVersion: 'software-1',
      createdAt: s.createdAt,
      publicJwk: s.publicJwk,
      licence: s.licence,
      counters: s.counters,
      countersAt: s.countersAt,
      lastSequence: s.lastSequence,
      update: s.update,
    };
  }

  /**
   * A signed dump for the vendor: identity (with the public key that signs it), licence and counters. The
   * counters are those the API hands in (its database is where usage is counted) and are kept on the dongle.
   */
  dump(counters: DongleCounter[], now = new Date()): Promise<{ fileName: string; jws: string }> {
    return this.exclusive(async () => {
      const s = await this.load();
      s.counters = counters;
      s.countersAt = now.toISOString();
      await this.save();
      const payload = {
        dongle: { id: s.id, serial: s.serial, software: true, publicJwk: s.publicJwk, createdAt: s.createdAt },
        licence: s.licence,
        counters: s.counters,
        lastSequence: s.lastSequence,
        createdAt: now.toISOString(),
      };
      const key = (await importJWK(s.privateJwk, 'EdDSA')) as CryptoKey;
      const jws = await new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
        .setProtectedHeader({ alg: 'EdDSA', typ: DUMP_TYP, jwk: s.publicJwk })
        .sign(key);
      return { fileName: `dongle-${s.id}-${now.toISOString().slice(0, 19).replace(/[-:]/g, '')}.jws`, jws };
    });
  }

  /**
   * Apply a signed update package: PENDING while it is checked, then APPLIED, or FAILED with the reason (bad
   * signature, another dongle's package, a replayed or older package, a licence that does not verify).
   */
  applyUpdate(jws: string, vendorKey: CryptoKey | null, now = () => new Date()): Promise<UpdateState> {
    return this.exclusive(async () => {
      const s = await this.load();
      s.update = { state: 'PENDING', startedAt: now().toISOString() };
      await this.save();
      const fail = async (reason: string, extra: Partial<UpdateState> = {}) => {
        s.update = { ...s.update, ...extra, state: 'FAILED', finishedAt: now().toISOString(), reason };
        await this.save();
        return s.update;
      };
      if (!vendorKey)
        return fail('the sidecar has no licensing public key (BIMS_LICENCE_PUBLIC_KEY), so it cannot check any update');
      let update;
      try {
        update = await verifyUpdate(jws, vendorKey);
      } catch (error) {
        return fail(
          error instanceof LicenceDocumentError && error.problem === 'INVALID_SIGNATURE'
            ? 'bad signature: the update was not signed with the licensing key'
            : `unreadable update: ${(error as Error).message}`,
        );
      }
      const extra = { dongleId: update.dongleId, sequence: update.sequence };
      if (update.dongleId !== s.id)
        return fail(`the update is for dongle ${update.dongleId}, not this one (${s.id})`, extra);
      if (s.nonces.includes(update.nonce))
        return fail(`replayed update: nonce ${update.nonce} was applied already`, extra);
      if (update.sequence <= s.lastSequence)
        return fail(
          `replayed update: sequence ${update.sequence} is not above the last applied ${s.lastSequence}`,
          extra,
        );
      try {
        const licence = await verifyLicence(update.licence, vendorKey);
        if (licence.dongleId && licence.dongleId !== s.id)
          return fail(`the licence inside is for dongle ${licence.dongleId}`, extra);
      } catch (error) {
        return fail(`the licence inside does not verify: ${(error as Error).message}`, extra);
      }
      s.licence = update.licence;
      s.lastSequence = update.sequence;
      s.nonces = [...s.nonces, update.nonce].slice(-NONCES_KEPT);
      s.update = { ...s.update, ...extra, state: 'APPLIED', finishedAt: now().toISOString() };
      await this.save();
      return s.update;
    });
  }

  async updateState(): Promise<UpdateState> {
    return (await this.load()).update;
  }
}
