import { z } from 'zod';

/**
 * The signed documents of licensing, as their payloads read once the Ed25519 signature has been checked.
 * They live apart from the HTTP schemas because the sidecar, the API and the `npm run licence` tool all
 * read and write them, and a change here is a change of the file format vendors and customers exchange.
 */

/** Operation types a licence may put a quota on (the operation types of the service). */
export const LICENSED_OPERATIONS = ['ENROLL', 'VERIFY', 'IDENTIFY', 'CHECK', 'REMOTE_VERIFY', 'REEXTRACT'] as const;
export type LicensedOperationType = (typeof LICENSED_OPERATIONS)[number];

/** Quota periods: calendar day and month in UTC, or the licence's whole life. */
export const QUOTA_PERIODS = ['DAY', 'MONTH', 'TOTAL'] as const;
export type QuotaPeriod = (typeof QUOTA_PERIODS)[number];

/** JWS `typ` of each document, so that a dongle update can never be passed off as a licence or the reverse. */
export const LICENCE_TYP = 'bims-licence+jws';
export const UPDATE_TYP = 'bims-dongle-update+jws';
export const DUMP_TYP = 'bims-dongle-dump+jws';

const isoDate = z.iso.datetime({ offset: true });

export const LicenceDocument = z.object({
  licenceId: z.string().min(1).max(128),
  licensee: z.string().min(1).max(256),
  source: z.enum(['CLOUD', 'INTERNET', 'DONGLE']),
  modalities: z.array(z.enum(['FACE', 'VOICE'])).min(1),
  /** e.g. `{ ENROLL: { period: 'MONTH', limit: 1000 } }`; an operation without a quota is unlimited. */
  quotas: z
    .partialRecord(
      z.enum(LICENSED_OPERATIONS),
      z.object({ period: z.enum(QUOTA_PERIODS), limit: z.number().int().min(0) }),
    )
    .default({}),
  issuedAt: isoDate.optional(),
  notBefore: isoDate,
  expiresAt: isoDate,
  /** A DONGLE licence names the dongle it belongs to. */
  dongleId: z.string().min(1).max(128).optional(),
});
export type LicenceDocument = z.infer<typeof LicenceDocument>;

/**
 * A dongle update: a new licence for one dongle. `sequence` must exceed the dongle's last applied one and
 * `nonce` must be new to it, so an update cannot be applied twice nor an older one replayed.
 */
export const UpdatePackage = z.object({
  dongleId: z.string().min(1).max(128),
  sequence: z.number().int().min(1),
  nonce: z.string().min(8).max(128),
  issuedAt: isoDate,
  /** The licence (a compact JWS) the dongle is to hold from now on. */
  licence: z
    .string()
    .min(1)
    .max(64 * 1024),
});
export type UpdatePackage = z.infer<typeof UpdatePackage>;

/** Counters as a dongle keeps them and a dump reports them. */
export const DongleCounter = z.object({
  operation: z.enum(LICENSED_OPERATIONS),
  period: z.string(),
  count: z.number().int().min(0),
});
export type DongleCounter = z.infer<typeof DongleCounter>;

/** The state of the last update a dongle was given, as the sidecar keeps it and getUpdateStatus reports it. */
export interface DongleUpdateState {
  state: 'IDLE' | 'PENDING' | 'APPLIED' | 'FAILED';
  startedAt?: string;
  finishedAt?: string;
  dongleId?: string;
  sequence?: number;
  reason?: string;
}
