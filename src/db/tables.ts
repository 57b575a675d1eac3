// Over 300 lines on purpose: one interface per table, the whole database's shape as Kysely sees it, in one place
// beside the migrations it mirrors (src/db/migrations/); each interface is a few lines and none depends on logic.
import type { ColumnType, Generated, GeneratedAlways, Selectable } from 'kysely';
import type { z } from 'zod';
import type { Role, Surface } from '../auth/roles.js';
import type { CandidateData, ChecksFromImageShape, OperationStatus, OperationType } from '../schemas/operations.js';
import type { Modality } from '../schemas/primitives.js';

/** Columns the database fills on insert. */
type Stamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** jsonb columns are written as JSON text (see `json()` in db/json.ts) and read back parsed. */
type Json<T> = ColumnType<T, string, string>;

export interface AccountsTable {
  id: Generated<number>;
  username: string;
  password_hash: string;
  role: Role;
  enabled: Generated<boolean>;
  /** Raised by every change of password, role or enabled flag; tokens issued under another version fail. */
  credential_version: Generated<number>;
  created_at: Stamp;
  updated_at: Stamp;
}

interface OauthClientsTable {
  client_id: string;
  name: string;
  secret_hash: string | null;
  redirect_uris: Json<string[]>;
  grant_types: Json<string[]>;
  role: Role;
  created_at: Stamp;
}

interface OauthCodesTable {
  code_hash: string;
  client_id: string;
  account_id: number;
  redirect_uri: string;
  code_challenge: string;
  scope: string;
  /** The account's credential version when the code was issued. */
  credential_version: Generated<number>;
  expires_at: ColumnType<Date, Date, Date>;
  used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

/** Access tokens revoked before their expiry (RFC 7009), by `jti`; kept until `expires_at`. */
interface RevokedAccessTokensTable {
  jti: string;
  expires_at: ColumnType<Date, Date, Date>;
}

interface RefreshTokensTable {
  token_hash: string;
  family_id: string;
  account_id: number;
  client_id: string;
  scope: string;
  /** The account's credential version when the family began. */
  credential_version: Generated<number>;
  expires_at: ColumnType<Date, Date, Date>;
  replaced_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  revoked_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  created_at: Stamp;
}

/** Failed logins per (subject, address), and per address under the subject `*` (see services/auth/throttle.ts). */
interface LoginThrottleTable {
  address: string;
  subject: string;
  failures: number;
  first_failure_at: ColumnType<Date, Date, Date>;
  last_failure_at: ColumnType<Date, Date, Date>;
  expires_at: ColumnType<Date, Date, Date>;
}

interface SigningKeysTable {
  kid: string;
  alg: string;
  private_jwk: Json<Record<string, unknown>>;
  public_jwk: Json<Record<string, unknown>>;
  created_at: Stamp;
  retired_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

/** The service's template keys (Ed25519 signing, JWE encryption); see services/templates/keys.ts. */
interface ServiceKeysTable {
  id: string;
  purpose: 'template-signing' | 'template-encryption';
  alg: string;
  private_jwk: Json<Record<string, unknown>>;
  public_jwk: Json<Record<string, unknown>>;
  created_at: Stamp;
  retired_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

interface SettingsTable {
  key: string;
  value: Json<unknown>;
  updated_at: Stamp;
}

export interface ExceptionsTable {
  id: string;
  timestamp: Stamp;
  type: string;
  message: string;
  operation_id: string | null;
  method: string | null;
  path: string | null;
  account_id: number | null;
  surface: string | null;
  call_stack: string;
}

export interface SubjectsTable {
  id: Generated<number>;
  subject_id: string;
  status: 'ENROLLED' | 'PENDING_ADJUDICATION' | 'REJECTED';
  metadata: Json<Record<string, unknown>>;
  template_version: string | null;
  enrollment_operation_uuid: string | null;
  created_at: Stamp;
  updated_at: Stamp;
  /** Names one state of the subject with its samples and templates; set by triggers (migration 0010), never written. */
  revision: Generated<number>;
  /** The matcher cluster's slot of the subject (migration 0012), computed by the database from `id`, never written. */
  shard_slot: GeneratedAlways<number>;
}

/** What an operation row holds is what the `Operation` model shows (services/operation-log/record.ts presents it). */
export interface OperationsTable {
  id: Generated<number>;
  uuid: string;
  type: z.output<typeof OperationType>;
  status: z.output<typeof OperationStatus>;
  subject_id: string | null;
  modalities: Json<z.output<typeof Modality>[]>;
  score: number | null;
  threshold: number | null;
  candidates: Json<z.output<typeof CandidateData>[] | null>;
  checks: Json<z.output<typeof ChecksFromImageShape> | null>;
  details: Json<unknown | null>;
  duration_ms: number;
  account_id: number | null;
  surface: Surface | null;
  created_at: Stamp;
}

interface ImagesTable {
  id: Generated<number>;
  operation_uuid: string;
  subject_ref: number | null;
  kind: 'ORIGINAL' | 'TOKEN' | 'FACE_CROP';
  format: string;
  width: number;
  height: number;
  /** Null only for a TOKEN image not made yet (made from `source_image_id` when first read). */
  bytes: Uint8Array | null;
  /** The ORIGINAL image a TOKEN image is cut from. */
  source_image_id: number | null;
  created_at: Stamp;
}

interface FaceSamplesTable {
  id: Generated<number>;
  subject_ref: number | null;
  operation_uuid: string;
  image_id: number | null;
  rectangle: Json<{ x: number; y: number; width: number; height: number }>;
  landmarks: Json<unknown | null>;
  yaw: number | null;
  pitch: number | null;
  roll: number | null;
  quality: number | null;
  liveness_score: number | null;
  template_version: string;
  /** The template extracted from this sample (format v1). */
  template: Uint8Array | null;
  created_at: Stamp;
}

interface VoiceSamplesTable {
  id: Generated<number>;
  subject_ref: number | null;
  operation_uuid: string;
  audio: Uint8Array;
  duration_ms: number;
  sample_rate: number;
  quality: number | null;
  speech_ratio: number | null;
  template_version: string;
  /** The template extracted from this sample (format v1). */
  template: Uint8Array | null;
  created_at: Stamp;
}

interface TemplatesTable {
  id: Generated<number>;
  subject_ref: number;
  modality: 'FACE' | 'VOICE';
  template_version: string;
  data: Uint8Array;
  quality: number | null;
  created_at: Stamp;
}

export interface AdjudicationCasesTable {
  id: Generated<number>;
  operation_uuid: string;
  subject_id: string;
  candidates: Json<z.output<typeof CandidateData>[]>;
  status: ColumnType<'PENDING' | 'CONFLICTED' | 'SOLVED', 'PENDING' | 'CONFLICTED' | 'SOLVED' | undefined>;
  assigned_to: number | null;
  assigned_at: Date | null;
  lease_expires_at: Date | null;
  outcome: 'DUPLICATE' | 'NOT_DUPLICATE' | null;
  solved_at: Date | null;
  created_at: Stamp;
}

export interface AdjudicationDecisionsTable {
  id: Generated<number>;
  case_id: number;
  account_id: number;
  decision: 'DUPLICATE' | 'NOT_DUPLICATE';
  duplicate_of_subject_id: string | null;
  comment: Generated<string>;
  created_at: Stamp;
}

interface LicencesTable {
  id: string;
  source: 'CLOUD' | 'INTERNET' | 'DONGLE';
  document: string;
  active: Generated<boolean>;
  installed_at: Stamp;
}

interface UsageCountersTable {
  period: string;
  operation_type: string;
  licence_id: Generated<string>;
  count: Generated<number>;
}

export interface ServiceNodesTable {
  node_id: string;
  hostname: string;
  version: string;
  runtime: string;
  started_at: Date;
  last_seen_at: Date;
}

/** One committed change to the ENROLLED gallery (see src/services/gallery/change-log.ts). */
interface GalleryChangesTable {
  id: Generated<number>;
  kind: 'put' | 'remove' | 'reset' | 'pruned';
  subject_refs: Json<number[]>;
  created_at: Stamp;
}

/** What a client reads of one capture session, written by the node running it (see src/services/capture/capture-store.ts). */
interface CaptureSessionsTable {
  session_id: number;
  handle_id: number;
  capture_id: string;
  node_id: string;
  account_id: number | null;
  purpose: string;
  state: string;
  events: Json<Record<string, unknown>[]>;
  result: Json<Record<string, unknown> | null>;
  started_at: Stamp;
  updated_at: Stamp;
  finished_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  deadline_at: Stamp;
  /** Whose capture it is, under the key of `gateway_sessions.owner` (null: written before the column existed). */
  owner: string | null;
}

/** A gateway session made through the API, and whose it is (see the migration 2026_11_28_0013). */
interface GatewaySessionsTable {
  /** Janus's id. */
  session_id: number;
  /** `account:<id>` or `client:<client id>`. */
  owner: string;
  node_id: string;
  handles: Generated<number>;
  created_at: Stamp;
}

/** A handle attached through the API, and its plugin. */
interface GatewayHandlesTable {
  session_id: number;
  handle_id: number;
  plugin: string;
}

/** The whole schema as Kysely sees it. */
export interface Database {
  accounts: AccountsTable;
  oauth_clients: OauthClientsTable;
  oauth_codes: OauthCodesTable;
  refresh_tokens: RefreshTokensTable;
  revoked_access_tokens: RevokedAccessTokensTable;
  login_throttle: LoginThrottleTable;
  signing_keys: SigningKeysTable;
  service_keys: ServiceKeysTable;
  settings: SettingsTable;
  exceptions: ExceptionsTable;
  subjects: SubjectsTable;
  operations: OperationsTable;
  images: ImagesTable;
  face_samples: FaceSamplesTable;
  voice_samples: VoiceSamplesTable;
  templates: TemplatesTable;
  adjudication_cases: AdjudicationCasesTable;
  adjudication_decisions: AdjudicationDecisionsTable;
  licences: LicencesTable;
  usage_counters: UsageCountersTable;
  service_nodes: ServiceNodesTable;
  gallery_changes: GalleryChangesTable;
  capture_sessions: CaptureSessionsTable;
  gateway_sessions: GatewaySessionsTable;
  gateway_handles: GatewayHandlesTable;
}

export type ExceptionRow = Selectable<ExceptionsTable>;
