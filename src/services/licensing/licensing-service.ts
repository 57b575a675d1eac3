import type { CryptoKey } from 'jose';
import { sidecarUrlOf } from '../../config/config.js';
import {
  deactivateLicencesOfSourceExcept,
  findActiveLicence,
  findLicenceById,
  upsertActiveLicence,
} from '../../db/repositories/licensing.js';
import { fetchCloudLicence } from '../../licensing/cloud-client.js';
import type { LicenceDocument } from '../../licensing/document.js';
import { LicensingUnavailableError } from '../../licensing/http.js';
import { DongleClient } from '../../licensing/sidecar-client.js';
import type { SidecarDongle } from '../../protocols/sidecar.js';
import { importLicenceKey, LicenceDocumentError, licenceTimeState, verifyLicence } from '../../licensing/verify.js';
import type { ServiceContext } from '../context.js';

type LicenceSource = 'CLOUD' | 'INTERNET' | 'DONGLE';
export type LicenceStateName =
  | 'VALID'
  | 'EXPIRED'
  | 'NOT_YET_VALID'
  | 'INVALID_SIGNATURE'
  | 'MISSING'
  | 'UNREACHABLE'
  | 'UNLICENSED';

/** The licence in force (or why there is none), judged at `checkedAt`. */
export interface LicenceView {
  mode: 'LICENSED' | 'UNLICENSED';
  source?: LicenceSource;
  state: LicenceStateName;
  licence?: LicenceDocument;
  /** The signed licence itself (compact JWS). */
  jws?: string;
  /** Plain words on the state, for every licensing answer. */
  message: string;
  /** When the licence was last fetched or read from its source. */
  fetchedAt?: Date;
  /** The dongle it came from, for DONGLE. */
  dongleId?: string;
}

/** What one read of a source gave: a licence (possibly stale), or why not. */
interface SourceRead {
  jws?: string;
  licence?: LicenceDocument;
  problem?: { state: 'INVALID_SIGNATURE' | 'MISSING' | 'UNREACHABLE'; message: string };
  fetchedAt: Date;
  dongleId?: string;
}

/** A failed read is retried after this long, not at every request. */
const RETRY_AFTER_FAILURE_MS = 5000;

const UNLICENSED_MESSAGE =
  'UNLICENSED: no licensing public key is configured (BIMS_LICENCE_PUBLIC_KEY), so no licence is checked and every operation is unlimited';

/**
 * Which licence is in force. Without a public key the service is UNLICENSED (and says so everywhere).
 * With one, the licence comes from one source: CLOUD (fetched with a token, refreshed periodically, the
 * last good one kept in the database for when the endpoint is down), INTERNET (a licence file activated
 * once into the database) or DONGLE (held by a dongle the sidecar reads). Reads are cached, so the check on
 * each operation costs no I/O; time (expiry) is judged afresh on every call.
 */
export class LicensingService {
  private key: Promise<CryptoKey | null> | null = null;
  private cached: { read: SourceRead; until: number } | null = null;
  private inflight: Promise<SourceRead> | null = null;
  readonly dongles: DongleClient;

  constructor(private readonly ctx: ServiceContext) {
    this.dongles = new DongleClient({
      url: sidecarUrlOf(ctx.config),
      token: ctx.config.BIMS_SIDECAR_TOKEN,
      timeoutMs: ctx.config.BIMS_GATEWAY_TIMEOUT_MS,
    });
  }

  /** Whether a public key is configured, i.e. whether licences are checked at all. */
  get licensed(): boolean {
    return Boolean(this.ctx.config.BIMS_LICENCE_PUBLIC_KEY);
  }

  /** The configured source, or the one the other settings point at. */
  get source(): LicenceSource {
    const c = this.ctx.config;
    return c.BIMS_LICENCE_SOURCE ?? (c.BIMS_LICENCE_CLOUD_URL ? 'CLOUD' : c.BIMS_LICENCE ? 'INTERNET' : 'DONGLE');
  }

  publicKey(): Promise<CryptoKey | null> {
    this.key ??= this.ctx.config.BIMS_LICENCE_PUBLIC_KEY
      ? importLicenceKey(this.ctx.config.BIMS_LICENCE_PUBLIC_KEY)
      : Promise.resolve(null);
    return this.key;
  }

  /** Forget the cached read, e.g. after a dongle update, so the next check reads the source again. */
  invalidate(): void {
    this.cached = null;
  }

  /** The licence in force now. */
  async current(): Promise<LicenceView> {
    if (!this.licensed) return { mode: 'UNLICENSED', state: 'UNLICENSED', message: UNLICENSED_MESSAGE };
    const read = await this.read();
    const base = {
      mode: 'LICENSED' as const,
      source: this.source,
      jws: read.jws,
      licence: read.licence,
      fetchedAt: read.fetchedAt,
      dongleId: read.dongleId,
    };
    if (!read.licence)
      return { ...base, state: read.problem?.state ?? 'MISSING', message: read.problem?.message ?? 'no licence' };
    const state = licenceTimeState(read.licence, this.ctx.now());
    const who = `licence ${read.licence.licenceId} (${read.licence.licensee}, ${this.source})`;
    const message =
      state === 'VALID'
        ? `${who} is valid until ${read.licence.expiresAt}`
        : state === 'EXPIRED'
          ? `${who} expired at ${read.licence.expiresAt}`
          : `${who} is not valid before ${read.licence.notBefore}`;
    // A stale licence (source unreachable now) stays in force; the message says so.
    return { ...base, state, message: read.problem ? `${message}; ${read.problem.message}` : message };
  }

  private async read(): Promise<SourceRead> {
    if (this.cached && Date.now() < this.cached.until) return this.cached.read;
    this.inflight ??= this.readSource()
      .then((read) => {
        const ttl = read.problem
          ? RETRY_AFTER_FAILURE_MS
          : this.source === 'INTERNET'
            ? Number.POSITIVE_INFINITY
            : this.ctx.config.BIMS_LICENCE_REFRESH_SECONDS * 1000;
        this.cached = { read, until: Date.now() + ttl };
        return read;
      })
      .finally(() => {
        this.inflight = null;
      });
    return this.inflight;
  }

  /** When the cached read is due to be refreshed (for the cloud info). */
  get nextRefreshAt(): Date | undefined {
    return this.cached && Number.isFinite(this.cached.until) ? new Date(this.cached.until) : undefined;
  }

  private async readSource(): Promise<SourceRead> {
    const fetchedAt = this.ctx.now();
    const source = this.source;
    try {
      if (source === 'INTERNET') return await this.readInternet(fetchedAt);
      if (source === 'CLOUD') return await this.readCloud(fetchedAt);
      return await this.readDongle(fetchedAt);
    } catch (error) {
      if (error instanceof LicensingUnavailableError) {
        if (error.operatorDetail)
          this.ctx.log.warn('licensing component unreachable', { source, operatorDetail: error.operatorDetail });
        const stale = source === 'CLOUD' ? await findActiveLicence(this.ctx.db, 'CLOUD') : undefined;
        const problem = {
          state: 'UNREACHABLE' as const,
          message: `the ${source === 'CLOUD' ? 'licensing endpoint' : 'sidecar'} cannot be reached: ${error.message}`,
        };
        if (stale) return { ...(await this.verified(stale.document)), problem, fetchedAt: stale.installed_at };
        return { problem, fetchedAt };
      }
      if (error instanceof LicenceDocumentError) {
        return {
          problem: {
            state: error.problem === 'INVALID_SIGNATURE' ? 'INVALID_SIGNATURE' : 'MISSING',
            message: `the ${source} licence is refused: ${error.message}`,
          },
          fetchedAt,
        };
      }
      throw error;
    }
  }

  private async verified(jws: string): Promise<{ jws: string; licence: LicenceDocument }> {
    return { jws, licence: await verifyLicence(jws, (await this.publicKey())!) };
  }

  /** Keep a verified licence as the one in force for its source (older ones of that source are retired). */
  private async store(source: LicenceSource, jws: string, licence: LicenceDocument): Promise<void> {
    await this.ctx.db.transaction().execute(async (trx) => {
      await deactivateLicencesOfSourceExcept(trx, source, licence.licenceId);
      await upsertActiveLicence(trx, { id: licence.licenceId, source, document: jws, installed_at: this.ctx.now() });
    });
  }

  /** INTERNET: the configured licence is activated once (stored); afterwards the stored one is used. */
  private async readInternet(fetchedAt: Date): Promise<SourceRead> {
    const given = this.ctx.config.BIMS_LICENCE;
    if (given) {
      const { jws, licence } = await this.verified(given);
      const existing = await findLicenceById(this.ctx.db, licence.licenceId);
      if (!existing || existing.document !== jws) await this.store('INTERNET', jws, licence);
      return { jws, licence, fetchedAt: existing?.installed_at ?? fetchedAt };
    }
    const row = await findActiveLicence(this.ctx.db, 'INTERNET');
    if (!row)
      return {
        problem: {
          state: 'MISSING',
          message: 'no INTERNET licence is configured (BIMS_LICENCE or BIMS_LICENCE_FILE) or activated',
        },
        fetchedAt,
      };
    return { ...(await this.verified(row.document)), fetchedAt: row.installed_at };
  }

  private async readCloud(fetchedAt: Date): Promise<SourceRead> {
    const { BIMS_LICENCE_CLOUD_URL: url, BIMS_LICENCE_CLOUD_TOKEN: token } = this.ctx.config;
    if (!url || !token)
      return {
        problem: {
          state: 'MISSING',
          message: 'the CLOUD source needs BIMS_LICENCE_CLOUD_URL and BIMS_LICENCE_CLOUD_TOKEN',
        },
        fetchedAt,
      };
    const { jws, licence } = await this.verified(
      await fetchCloudLicence(url, token, this.ctx.config.BIMS_GATEWAY_TIMEOUT_MS),
    );
    const existing = await findActiveLicence(this.ctx.db, 'CLOUD');
    if (existing?.document !== jws) await this.store('CLOUD', jws, licence);
    return { jws, licence, fetchedAt };
  }

  /** DONGLE: the first attached dongle holding a licence that verifies. */
  private async readDongle(fetchedAt: Date): Promise<SourceRead> {
    const dongles: SidecarDongle[] = await this.dongles.list();
    const holding = dongles.filter((d) => d.licence);
    if (holding.length === 0) {
      return {
        problem: {
          state: 'MISSING',
          message: dongles.length
            ? `no attached dongle holds a licence (${dongles.map((d) => d.id).join(', ')})`
            : 'no dongle is attached',
        },
        fetchedAt,
      };
    }
    let lastError: unknown;
    for (const dongle of holding) {
      try {
        const { jws, licence } = await this.verified(dongle.licence!);
        if (licence.dongleId && licence.dongleId !== dongle.id)
          throw new LicenceDocumentError('MALFORMED', `licence for dongle ${licence.dongleId} found on ${dongle.id}`);
        return { jws, licence, fetchedAt, dongleId: dongle.id };
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError;
  }
}
