import { iso, modeOf, termsOf } from './licence-terms.js';
import type { LicensingService } from './licensing-service.js';
import type { ServiceContext } from '../context.js';

/**
 * What the service knows of its licence sources other than dongles (seed section 4.8): the CLOUD endpoint,
 * the INTERNET licence file, and the signed licence in force itself.
 */

/** The CLOUD source: configured or not, when it was last fetched, and the terms of its licence. */
export async function cloudInfo(services: { ctx: ServiceContext; licensing: LicensingService }) {
  const { config } = services.ctx;
  const view = await services.licensing.current();
  const mine = view.source === 'CLOUD';
  return {
    licensing: modeOf(view),
    configured: Boolean(config.BIMS_LICENCE_CLOUD_URL && config.BIMS_LICENCE_CLOUD_TOKEN),
    endpoint: config.BIMS_LICENCE_CLOUD_URL
      ? new URL(config.BIMS_LICENCE_CLOUD_URL).origin + new URL(config.BIMS_LICENCE_CLOUD_URL).pathname
      : undefined,
    lastFetchedAt: mine ? iso(view.fetchedAt) : undefined,
    nextRefreshAt: mine ? iso(services.licensing.nextRefreshAt) : undefined,
    ...termsOf(mine || view.mode === 'UNLICENSED' ? view.state : 'MISSING', mine ? view.licence : undefined),
  };
}

/** The INTERNET source: whether a licence file is activated, since when, and its terms. */
export async function internetInfo(services: { licensing: LicensingService }) {
  const view = await services.licensing.current();
  const mine = view.source === 'INTERNET' && view.licence;
  return {
    licensing: modeOf(view),
    activated: Boolean(mine),
    activatedAt: mine ? iso(view.fetchedAt) : undefined,
    ...termsOf(
      view.source === 'INTERNET' || view.mode === 'UNLICENSED' ? view.state : 'MISSING',
      mine ? view.licence : undefined,
    ),
  };
}

/** The licence in force as its signed token (compact JWS), for clients that verify it themselves. */
export async function licensingToken(services: { licensing: LicensingService }) {
  const view = await services.licensing.current();
  return {
    licensing: modeOf(view),
    token: view.jws,
    source: view.jws ? view.source : undefined,
    expiresAt: iso(view.licence?.expiresAt),
  };
}
