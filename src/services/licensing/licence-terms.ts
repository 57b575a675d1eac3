import type { LicenceDocument, LicensedOperationType } from '../../licensing/document.js';
import type { LicenceStateName, LicenceView } from './licensing-service.js';

/**
 * How the licensing answers (seed section 4.8) state a licence. Every answer carries `licensing`, the mode of
 * the service, so an UNLICENSED service is never mistaken for a licensed one.
 */

/** The service's licensing mode, for the `licensing` member of every answer. */
export function modeOf(view: LicenceView) {
  return {
    mode: view.mode,
    source: view.source,
    state: view.state,
    licenseId: view.licence?.licenceId,
    message: view.message,
  };
}

/** An instant as the HTTP schemas spell it; undefined stays undefined. */
export const iso = (d: Date | string | undefined) => (d === undefined ? undefined : new Date(d).toISOString());

/** The terms a licence states, in the shape of the HTTP schemas. */
export function termsOf(state: LicenceStateName, licence: LicenceDocument | undefined) {
  return {
    state,
    licenseId: licence?.licenceId,
    licensee: licence?.licensee,
    modalities: licence?.modalities ?? [],
    quotas: Object.entries(licence?.quotas ?? {}).map(([operation, q]) => ({
      operation: operation as LicensedOperationType,
      period: q!.period,
      limit: q!.limit,
    })),
    issuedAt: iso(licence?.issuedAt),
    notBefore: iso(licence?.notBefore),
    expiresAt: iso(licence?.expiresAt),
    dongleId: licence?.dongleId,
  };
}
