import type { LicenceDocument, LicensedOperationType } from '../../licensing/document.js';
import { LicensingUnavailableError } from '../../licensing/http.js';
import { periodStartOf } from '../../licensing/periods.js';
import { DongleRefusedError, type DongleUpdateState, type SidecarDongle } from '../../licensing/sidecar-client.js';
import { licenceTimeState, verifyLicence } from '../../licensing/verify.js';
import { DomainError } from '../errors.js';
import type { Services } from '../index.js';
import type { LicenceStateName, LicenceView } from './licensing-service.js';

/**
 * The licensing operations (seed section 4.8), answered from real state: the licence in force, the
 * sidecar's dongles, and the usage counters in the database. Every answer carries `licensing`, the mode of
 * the service, so an UNLICENSED service is never mistaken for a licensed one.
 */

export function modeOf(view: LicenceView) {
  return { mode: view.mode, source: view.source, state: view.state, licenseId: view.licence?.licenceId, message: view.message };
}

const iso = (d: Date | string | undefined) => (d === undefined ? undefined : new Date(d).toISOString());

/** The terms a licence states, in the shape of the HTTP schemas. */
function termsOf(state: LicenceStateName, licence: LicenceDocument | undefined) {
  return {
    state,
    licenseId: licence?.licenceId,
    licensee: licence?.licensee,
    modalities: licence?.modalities ?? [],
    quotas: Object.entries(licence?.quotas ?? {}).map(([operation, q]) => ({ operation: operation as LicensedOperationType, period: q!.period, limit: q!.limit })),
    issuedAt: iso(licence?.issuedAt),
    notBefore: iso(licence?.notBefore),
    expiresAt: iso(licence?.expiresAt),
    dongleId: licence?.dongleId,
  };
}

/** Sidecar failures in the terms of the domain: unreachable is 503; a refusal keeps its meaning. */
async function viaSidecar<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof LicensingUnavailableError) throw new DomainError('service-unavailable', `The licensing component is unavailable: ${error.message}`, { component: 'sidecar' });
    if (error instanceof DongleRefusedError) throw new DomainError(error.status === 404 ? 'not-found' : 'conflict', error.message);
    throw error;
  }
}

export async function cloudInfo(services: Services) {
  const { config } = services.ctx;
  const view = await services.licensing.current();
  const mine = view.source === 'CLOUD';
  return {
    licensing: modeOf(view),
    configured: Boolean(config.BIMS_LICENCE_CLOUD_URL && config.BIMS_LICENCE_CLOUD_TOKEN),
    endpoint: config.BIMS_LICENCE_CLOUD_URL ? new URL(config.BIMS_LICENCE_CLOUD_URL).origin + new URL(config.BIMS_LICENCE_CLOUD_URL).pathname : undefined,
    lastFetchedAt: mine ? iso(view.fetchedAt) : undefined,
    nextRefreshAt: mine ? iso(services.licensing.nextRefreshAt) : undefined,
    ...termsOf(mine || view.mode === 'UNLICENSED' ? view.state : 'MISSING', mine ? view.licence : undefined),
  };
}

export async function internetInfo(services: Services) {
  const view = await services.licensing.current();
  const mine = view.source === 'INTERNET' && view.licence;
  return {
    licensing: modeOf(view),
    activated: Boolean(mine),
    activatedAt: mine ? iso(view.fetchedAt) : undefined,
    ...termsOf(view.source === 'INTERNET' || view.mode === 'UNLICENSED' ? view.state : 'MISSING', mine ? view.licence : undefined),
  };
}

/** A dongle's own licence, judged on its own (it may not be the licence in force). */
async function dongleTerms(services: Services, dongle: SidecarDongle) {
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

export async function dongles(services: Services) {
  const view = await services.licensing.current();
  const list = await viaSidecar(() => services.licensing.dongles.list());
  return {
    licensing: modeOf(view),
    dongles: await Promise.all(list.map(async (d) => ({
      id: d.id, serial: d.serial ?? undefined, type: d.software ? ('SOFTWARE' as const) : ('HARDWARE' as const), software: d.software, present: d.present,
      firmwareVersion: d.firmwareVersion, usb: d.usb,
      counters: d.counters.map((c) => ({ operation: c.operation, period: c.period, used: c.count })),
      countersAt: d.countersAt ?? undefined, lastUpdateSequence: d.lastSequence,
      licensing: modeOf(view),
      ...(await dongleTerms(services, d)),
    }))),
  };
}

/** The usage counted under one licence, as a dongle records it. */
async function countersOf(services: Services, licenceId: string) {
  const rows = await services.ctx.db.selectFrom('usage_counters').select(['period', 'operation_type', 'count']).where('licence_id', '=', licenceId).orderBy('period').orderBy('operation_type').execute();
  return rows.map((r) => ({ operation: r.operation_type as LicensedOperationType, period: r.period, count: r.count }));
}

/** generateDongleDump: the sidecar signs the dump with the dongle's key after recording our counters on it. */
export async function dongleDump(services: Services, dongleId: string | undefined) {
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

export async function licensingToken(services: Services) {
  const view = await services.licensing.current();
  return { licensing: modeOf(view), token: view.jws, source: view.jws ? view.source : undefined, expiresAt: iso(view.licence?.expiresAt) };
}

export async function updateStatus(services: Services) {
  const view = await services.licensing.current();
  const state: DongleUpdateState = await viaSidecar(() => services.licensing.dongles.updateStatus());
  return { licensing: modeOf(view), ...state };
}

/**
 * updateDongle: hand the signed package to the sidecar, which checks signature, dongle id, sequence and
 * nonce. A refused package is a 422 naming the reason (getUpdateStatus then says FAILED with it).
 */
export async function updateDongle(services: Services, packageBytes: Uint8Array) {
  const jws = new TextDecoder().decode(packageBytes).trim();
  const state = await viaSidecar(() => services.licensing.dongles.applyUpdate(jws));
  services.licensing.invalidate();
  const view = await services.licensing.current();
  if (state.state === 'FAILED') {
    throw new DomainError('unprocessable', `The dongle update was refused: ${state.reason}`, { updateStatus: { ...state, licensing: modeOf(view) } });
  }
  return { licensing: modeOf(view), ...state };
}

/** getLicensingUsage: counts per operation type and DAY or MONTH period, within [from, to]. */
export async function usage(services: Services, query: { from?: Date; to?: Date; period: 'DAY' | 'MONTH'; operation?: LicensedOperationType }) {
  const view = await services.licensing.current();
  const now = services.ctx.now();
  const to = query.to ?? now;
  const from = query.from ?? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  if (from > to) throw new DomainError('validation', 'query.from: must not be after query.to', { errors: [{ field: 'query.from', message: 'must not be after query.to' }] });
  let select = services.ctx.db
    .selectFrom('usage_counters')
    .select(['period', 'operation_type', (eb) => eb.fn.sum<number>('count').as('count')])
    .where('period', 'like', `${query.period}:%`)
    .groupBy(['period', 'operation_type'])
    .orderBy('period')
    .orderBy('operation_type');
  if (query.operation) select = select.where('operation_type', '=', query.operation);
  const rows = await select.execute();
  // A period counts when it overlaps the window: it starts before `to` and its start is not before from's period.
  const fromKeyStart = query.period === 'DAY' ? Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()) : Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), 1);
  const entries = rows
    .map((r) => ({ operation: r.operation_type as LicensedOperationType, start: periodStartOf(r.period), count: Number(r.count) }))
    .filter((e) => e.start && e.start.getTime() >= fromKeyStart && e.start.getTime() <= to.getTime())
    .map((e) => {
      const quota = view.licence?.quotas[e.operation];
      return { operation: e.operation, periodStart: e.start!.toISOString(), count: e.count, ...(quota?.period === query.period ? { limit: quota.limit } : {}) };
    });
  const totals = new Map<LicensedOperationType, number>();
  for (const e of entries) totals.set(e.operation, (totals.get(e.operation) ?? 0) + e.count);
  return {
    licensing: modeOf(view),
    from: from.toISOString(), to: to.toISOString(), period: query.period, entries,
    totals: [...totals].map(([operation, count]) => ({ operation, count })),
  };
}
