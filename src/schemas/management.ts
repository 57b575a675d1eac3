import { z } from './common.js';

const settingKey = z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const settingType = z.enum(['integer', 'number', 'boolean', 'enum']);
const range = {
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  allowedValues: z.array(z.string()).optional(),
  unit: z.string().optional(),
};

/** One known setting: effective value, default, type and range, and whether an administrator overrode it. */
export const SettingModel = z
  .object({
    key: z.string(),
    value: z
      .unknown()
      .openapi({ description: 'The effective value: the override when there is one, else the default' }),
    defaultValue: z.unknown(),
    type: settingType,
    ...range,
    scope: z.enum(['operation', 'service']),
    description: z.string(),
    overridden: z.boolean(),
    updatedAt: z.string().optional().openapi({ format: 'date-time' }),
  })
  .openapi('Setting');

export const SettingKeyQuery = z.strictObject({ key: settingKey.openapi({ description: 'The exact key' }) });
export const SettingPrefixQuery = z.strictObject({
  key: z.string().max(200, 'must be at most 200 characters').openapi({ description: 'Key prefix, e.g. checks.face.' }),
});

/** `value` is a JSON value of the key's type; null deletes the override (back to the default). */
export const SetSettingRequest = z
  .strictObject({
    key: settingKey,
    value: z
      .unknown()
      .refine((v) => v !== undefined, 'is required')
      .openapi({ description: "A JSON value of the key's type; null restores the default" }),
  })
  // `value` may be any JSON value, null included, but must be there: the document says so too.
  .openapi('SetSettingRequest', { required: ['key', 'value'] });

export const ResetSettingsResult = z
  .object({ removed: z.number().int().openapi({ description: 'Overrides removed' }), settings: z.array(SettingModel) })
  .openapi('ResetSettingsResult');

/** A property of biometric operations with its default, as `getDefaultProperties` lists them. */
export const DefaultProperty = z
  .object({ key: z.string(), type: settingType, default: z.unknown(), ...range, description: z.string() })
  .openapi('DefaultProperty');

const subjectCounts = z.object({
  total: z.number().int(),
  ENROLLED: z.number().int(),
  PENDING_ADJUDICATION: z.number().int(),
  REJECTED: z.number().int(),
});

const digest = z.object({ templates: z.number().int(), sum: z.string() });
const reconcileReport = z.object({
  at: z.string().openapi({ format: 'date-time' }),
  changeId: z.number().int().openapi({ description: 'The gallery change-log position both sides were compared at' }),
  inSync: z.boolean(),
  memory: digest,
  database: digest,
});

const GalleryState = z
  .object({
    subjects: z.number().int(),
    templates: z.number().int(),
    digest: z.string().openapi({
      description:
        "Sum of one term per template (row, subject, checksum): equal to the database's when the gallery matches it",
    }),
    lastChangeId: z
      .number()
      .int()
      .openapi({ description: 'The gallery change-log id up to which this node has applied every change' }),
    reconciliation: z.object({
      checks: z.number().int(),
      driftsRepaired: z.number().int().openapi({
        description: 'Comparisons that found the gallery different from the database (it was then reloaded)',
      }),
      last: reconcileReport.nullable(),
      lastDrift: reconcileReport.nullable(),
    }),
    cluster: z
      .object({
        shards: z.number().int(),
        parts: z.array(
          z.object({
            shard: z.number().int(),
            subjects: z.number().int(),
            templates: z.number().int(),
            digest: z.string(),
            lastChangeId: z.number().int(),
          }),
        ),
        missing: z.array(z.number().int()).openapi({ description: 'Shards no replica answered for' }),
      })
      .optional()
      .openapi({
        description:
          'With a matcher cluster (BIMS_NATS_URL, docs/scale-out.md): each shard as one of its replicas reports it; the figures above are their sums, and each shard reconciles itself',
      }),
  })
  .openapi({
    description:
      "This node's in-memory gallery (ENROLLED subjects and their face and voice templates loaded for matching), and its last comparisons with the database (every BIMS_GALLERY_RECONCILE_SECONDS, and after the LISTEN connection returns)",
  });

export const ManagementInfo = z
  .object({
    version: z.string(),
    templateVersion: z
      .string()
      .openapi({ description: "Version of the templates the face engine makes now ('none' until it is installed)" }),
    startedAt: z.string().openapi({ format: 'date-time' }),
    uptimeSeconds: z.number().int(),
    database: z.object({ dialect: z.enum(['postgres', 'pglite']), serverVersion: z.string() }),
    counts: z.object({
      subjects: subjectCounts,
      operations: z.number().int(),
      accounts: z.number().int(),
      pendingAdjudicationCases: z.number().int(),
      exceptions: z.number().int(),
    }),
    node: z.object({ id: z.string(), hostname: z.string(), runtime: z.string() }),
    workerPool: z.looseObject({ state: z.string() }),
    gallery: GalleryState,
    licence: z.looseObject({ state: z.string() }),
  })
  // Host details are for the ADMIN surfaces: the user surface answers without them (getManagementInfo).
  .partial({ database: true, counts: true, node: true, gallery: true })
  .openapi('ManagementInfo');

const ServiceNode = z
  .object({
    nodeId: z.string(),
    hostname: z.string(),
    version: z.string(),
    runtime: z.string(),
    startedAt: z.string().openapi({ format: 'date-time' }),
    lastSeenAt: z.string().openapi({ format: 'date-time' }),
    alive: z.boolean().openapi({ description: 'Reported in within the last 90 seconds' }),
    current: z.boolean().openapi({ description: 'The node that answered this request' }),
  })
  .openapi('ServiceNode');

/** The database's role, replication and connections as PostgreSQL reports them, plus the service nodes (seed model, A R). */
export const DbClusterStatus = z
  .object({
    dialect: z.enum(['postgres', 'pglite']),
    serverVersion: z.string(),
    database: z.string().nullable(),
    role: z.enum(['primary', 'replica', 'unknown']).openapi({ description: 'From pg_is_in_recovery()' }),
    replication: z
      .array(
        z.object({
          applicationName: z.string().nullable(),
          clientAddress: z.string().nullable(),
          state: z.string().nullable(),
          syncState: z.string().nullable(),
          sentLsn: z.string().nullable(),
          replayLsn: z.string().nullable(),
          replayLagSeconds: z.number().nullable(),
        }),
      )
      .openapi({ description: 'Standbys streaming from this server (pg_stat_replication)' }),
    connections: z
      .array(z.object({ state: z.string(), count: z.number().int() }))
      .openapi({ description: 'Backends connected to this database, by state (pg_stat_activity)' }),
    nodes: z.array(ServiceNode),
    notes: z.array(z.string()).openapi({ description: 'What the database could not report, and why' }),
  })
  .openapi('DbClusterStatus');

export const TruncateResult = z
  .object({
    removed: z.record(z.string(), z.number().int()).openapi({ description: 'Rows removed per table' }),
    total: z.number().int(),
    kept: z.array(z.string()).openapi({ description: 'Tables left untouched' }),
  })
  .openapi('TruncateResult');
