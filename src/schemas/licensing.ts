import { queryDate, z } from './common.js';
import { MiB, base64Text, dateTime } from './primitives.js';

/**
 * Licensing (seed section 4.8): a licence is a signed document (Ed25519) from one of three sources: CLOUD,
 * INTERNET or DONGLE. Usage counts operations per type and period.
 */

const LicensedOperation = z.enum(['ENROLL', 'VERIFY', 'IDENTIFY', 'CHECK', 'REMOTE_VERIFY', 'REEXTRACT']);
const LicenceState = z.enum([
  'VALID',
  'EXPIRED',
  'NOT_YET_VALID',
  'EXHAUSTED',
  'INVALID_SIGNATURE',
  'MISSING',
  'UNREACHABLE',
  'UNLICENSED',
]);

/**
 * The licensing mode of the service, in every licensing answer: UNLICENSED (no public key configured, so
 * nothing is checked and nothing is limited) is never left implicit.
 */
const LicensingMode = z
  .object({
    mode: z.enum(['LICENSED', 'UNLICENSED']),
    source: z
      .enum(['CLOUD', 'INTERNET', 'DONGLE'])
      .optional()
      .openapi({ description: 'Where the licence in force comes from' }),
    state: LicenceState,
    licenseId: z.string().optional(),
    message: z.string().openapi({ description: 'The state in plain words' }),
  })
  .openapi('LicensingMode');

/** What every licence states, whichever its source. */
const licenceTerms = {
  licensing: LicensingMode,
  state: LicenceState,
  licenseId: z.string().optional(),
  licensee: z.string().optional(),
  modalities: z.array(z.enum(['FACE', 'VOICE'])),
  quotas: z
    .array(
      z.object({
        operation: LicensedOperation,
        period: z.enum(['DAY', 'MONTH', 'TOTAL']),
        limit: z.number().int().min(0),
      }),
    )
    .openapi({ description: 'Operation quotas; an operation without a quota is unlimited' }),
  issuedAt: dateTime.optional(),
  notBefore: dateTime.optional(),
  expiresAt: dateTime.optional(),
  dongleId: z.string().optional(),
};

export const Cloud = z
  .object({
    configured: z.boolean(),
    endpoint: z.string().optional().openapi({ description: 'The licensing endpoint the licence is fetched from' }),
    lastFetchedAt: dateTime.optional(),
    nextRefreshAt: dateTime.optional(),
    ...licenceTerms,
  })
  .openapi('Cloud', { description: 'The cloud licence currently used' });

export const InternetLicense = z
  .object({
    activated: z.boolean(),
    activatedAt: dateTime.optional(),
    hardwareId: z.string().optional().openapi({ description: 'The installation the licence file is bound to' }),
    ...licenceTerms,
  })
  .openapi('InternetLicense', { description: 'The internet licence (a licence file activated once) currently used' });

export const Dongle = z
  .object({
    id: z.string(),
    serial: z.string().optional(),
    type: z
      .enum(['HARDWARE', 'SOFTWARE'])
      .openapi({ description: 'SOFTWARE: the file-backed dongle the sidecar offers when no hardware key is present' }),
    software: z
      .boolean()
      .openapi({ description: 'True for the file-backed software dongle: as safe as the file system it lives on' }),
    present: z.boolean(),
    firmwareVersion: z.string().optional(),
    usb: z
      .object({
        vendorId: z.string(),
        productId: z.string(),
        hid: z.boolean(),
        manufacturer: z.string().nullable(),
        product: z.string().nullable(),
      })
      .optional(),
    counters: z
      .array(z.object({ operation: LicensedOperation, period: z.string(), used: z.number().int().min(0) }))
      .openapi({ description: 'Usage recorded on the dongle at its last dump' }),
    countersAt: dateTime.optional(),
    lastUpdateSequence: z.number().int().optional(),
    ...licenceTerms,
  })
  .openapi('Dongle', { description: 'A dongle attached to the licensing component' });

export const Dongles = z
  .object({ licensing: LicensingMode, dongles: z.array(Dongle) })
  .openapi('Dongles', { description: 'The dongles the sidecar reports, hardware keys or the software dongle' });

export const Usage = z
  .object({
    licensing: LicensingMode,
    from: dateTime,
    to: dateTime,
    period: z.enum(['DAY', 'MONTH']),
    entries: z.array(
      z.object({
        operation: LicensedOperation,
        periodStart: dateTime,
        count: z.number().int().min(0),
        limit: z.number().int().min(0).optional(),
      }),
    ),
    totals: z.array(z.object({ operation: LicensedOperation, count: z.number().int().min(0) })),
  })
  .openapi('Usage', { description: 'Counts of licensed operations per type and period' });

export const PacketBytes = z
  .strictObject({
    data: base64Text(4 * MiB, 'The packet, base64'),
    fileName: z
      .string()
      .min(1)
      .max(255)
      .regex(/^[^/\\\u0000-\u001f]+$/, 'must be a plain file name')
      .optional(),
    contentType: z.string().max(255).default('application/octet-stream'),
  })
  .openapi('PacketBytes', { description: 'A binary packet: a dongle dump, or a licence update to apply' });

export const LicensingToken = z.object({
  licensing: LicensingMode,
  token: z.string().optional().openapi({
    description:
      'The signed licence in force (a compact JWS, Ed25519); absent when there is none. The cloud credential itself is never shown',
  }),
  source: z.enum(['CLOUD', 'INTERNET', 'DONGLE']).optional(),
  expiresAt: dateTime.optional(),
});

export const UpdateStatus = z.object({
  licensing: LicensingMode,
  state: z.enum(['IDLE', 'PENDING', 'APPLIED', 'FAILED']),
  startedAt: dateTime.optional(),
  finishedAt: dateTime.optional(),
  dongleId: z.string().optional(),
  sequence: z.number().int().optional(),
  reason: z.string().optional().openapi({ description: 'Why the update failed' }),
});

export const UsageQuery = z.strictObject({
  from: queryDate.optional().openapi({
    description:
      'Start of the window (ISO 8601); default: start of the current month. Not after to, or now when to is left out (a 400 naming from otherwise)',
  }),
  to: queryDate.optional().openapi({ description: 'End of the window (ISO 8601); default: now' }),
  period: z.enum(['DAY', 'MONTH']).default('DAY'),
  operation: LicensedOperation.optional(),
});

export const DongleDumpQuery = z.strictObject({
  dongleId: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .openapi({ description: 'Which dongle; default: the only one attached' }),
});
