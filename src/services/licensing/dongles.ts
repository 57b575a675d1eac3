import { listUsageCountersOfLicence } from '../../db/repositories/licensing.js';
import type { LicensedOperationType } from '../../licensing/document.js';
import { LicensingUnavailableError } from '../../licensing/http.js';
import { DongleRefusedError } from '../../licensing/sidecar-client.js';
import type { DongleUpdateState } from '../../licensing/document.js';
import type { SidecarDongle } from '../../protocols/sidecar.js';
import { licenceTimeState, verifyLicence } from '../../licensing/verify.js';
import { DomainError } from '../errors.js';
import { modeOf, termsOf } from './licence-terms.js';
import type { LicensingService } from './licensing-service.js';
import type { ServiceContext } from '../context.js';

/** What the dongle operations use: the database (usage counters) and the licence in force. */
type DongleServices = { ctx: ServiceContext; licensing: LicensingService };

/**
 * The dongle operations (seed section 4.8), answered through the sidecar that owns the dongles: the list with
 * each dongle's own licence, the signed dump of our usage counters, and the update of a dongle's licence.
 */

/** Sidecar failures in the terms of the domain: unreachable is 503; a refusal keeps its meaning. */
async function viaSidecar<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof LicensingUnavailableError)
      throw new DomainError('service-unavailable', `The licensing component is unavailable: ${error.message}`, {
        component: 'sidecar',
      });
    if (error instanceof DongleRefusedError)
      throw new DomainError(error.status === 404 ? 'not-found' : 'conflict', error.message);
    throw error;
  }
}

/** A dongle's own licence, judged on its own (it may not be the licence in force). */
async function dongleTerms(services: DongleServices, dongle: SidecarDongle) {
  const key = await services.licensing.publicKey();
  if (!dongle.licence) return termsOf(key ? 'MISSING' : 'UNLICENSED', undefined);
  if (!key) return termsOf('UNLICENSED', undefined);
  try {
    const licence = await verifyLicence(dongle.licence, key);
    return termsOf(licenceTimeState(licence, services.ctx.now()), licence);
  } catch {
    return termsOf('INVALID_SIGNATURE', undefined);
  }
}

/** getDongles: every dongle the sidecar sees, hardware or software, with its counters and its licence's terms. */
export async function listDongles(services: DongleServices) {
  const view = await services.licensing.current();
  const list = await viaSidecar(() => services.licensing.dongles.list());
  return {
    licensing: modeOf(view),
    dongles: await Promise.all(
      list.map(async (d) => ({
        id: d.id,
        serial: d.serial ?? undefined,
        type: d.software ? ('SOFTWARE' as const) : ('HARDWARE' as const),
        software: d.software,
        present: d.present,
        firmwareVersion: d.firmwareVersion,
        usb: d.usb,
        counters: d.counters.map((c) => ({ operation: c.operation, period: c.period, used: c.count })),
        countersAt: d.countersAt ?? undefined,
        lastUpdateSequence: d.lastSequence,
        licensing: modeOf(view),
        ...(await dongleTerms(services, d)),
      })),
    ),
  };
}

/** The usage counted under one licence, as a dongle records it. */
async function countersOf(services: { ctx: ServiceContext }, licenceId: string) {
  const rows = await listUsageCountersOfLicence(services.ctx.db, licenceId);
  return rows.map((r) => ({ operation: r.operation_type as LicensedOperationType, period: r.period, count: r.count }));
}

/** generateDongleDump: the sidecar signs the dump with the dongle's key after recording our counters on it. */
export async function dongleDump(services: DongleServices, dongleId: string | undefined) {
  return viaSidecar(async () => {
    const list = await services.licensing.dongles.list();
    const target = dongleId ? list.find((d) => d.id === dongleId) : list.length === 1 ? list[0] : undefined;
    const key = await services.licensing.publicKey();
    let counters: Awaited<ReturnType<typeof countersOf>> = [];
    if (target?.licence && key) {
      const licence = await verifyLicence(target.licence, key).catch(() => null);
      if (licence) counters = await countersOf(services, licence.licenceId);
    }
    const dump = await services.licensing.dongles.dump(dongleId, counters);
    return { fileName: dump.fileName, bytes: new TextEncoder().encode(dump.jws) };
  });
}

/** getUpdateStatus: where the last dongle update got to. */
export async function dongleUpdateStatus(services: { licensing: LicensingService }) {
  const view = await services.licensing.current();
  const state: DongleUpdateState = await viaSidecar(() => services.licensing.dongles.updateStatus());
  return { licensing: modeOf(view), ...state };
}

/**
 * updateDongle: hand the signed package to the sidecar, which checks signature, dongle id, sequence and
 * nonce. A refused package is a 422 naming the reason (getUpdateStatus then says FAILED with it).
 */
export async function updateDongle(services: { licensing: LicensingService }, packageBytes: Uint8Array) {
  const jws = new TextDecoder().decode(packageBytes).trim();
  const state = await viaSidecar(() => services.licensing.dongles.applyUpdate(jws));
  services.licensing.invalidate();
  const view = await services.licensing.current();
  if (state.state === 'FAILED') {
    throw new DomainError('unprocessable', `The dongle update was refused: ${state.reason}`, {
      updateStatus: { ...state, licensing: modeOf(view) },
    });
  }
  return { licensing: modeOf(view), ...state };
}
