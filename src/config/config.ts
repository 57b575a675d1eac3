// Over 300 lines on purpose: the one schema of every BIMS_* variable, read top to bottom by docs/configuration.md's
// generator (npm run docs:config) and its test; splitting it would scatter the settings a reader compares.
import { z } from 'zod';

/**
 * Every setting of the process, read from an environment-like record (Node's `process.env`, Deno's
 * `Deno.env.toObject()`, a Workers `env` binding). Runtime entries call {@link loadConfig}; nothing else
 * reads the environment, so the core stays portable and testable.
 */
export const configSchema = z.object({
  /** Port the API listens on. */
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** Address the API listens on; `0.0.0.0` (or `::`) to be reached from other machines. */
  HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * Seconds the Node server (the API's, and the dashboard component's, whose client is the API's proxy) keeps an
   * idle keep-alive connection open (Node's own default is 5). Longer than the
   * idle timeout of a proxy or load balancer in front (60 s on many), so the server never closes a connection
   * at the moment a proxy or client sends its next request on it, which that client sees as a reset.
   */
  BIMS_HTTP_KEEP_ALIVE_SECONDS: z.coerce.number().int().min(1).max(3600).default(65),
  /** `postgres://...` selects PostgreSQL (through `pg`); unset selects the embedded PGlite in BIMS_DATA_DIR. */
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL (unset it to use the embedded PGlite)')
    .optional(),
  /**
   * Connections of each of the two pools a PostgreSQL process keeps: one for statements, one for the subject reads
   * (planned once for all values: src/db/read-connections.ts). A node opens up to twice this, plus one that
   * listens for other nodes' changes; size PostgreSQL's max_connections for every node and `bims matcher`. PGlite: unused.
   */
  BIMS_DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(500).default(10),
  /** Folder of the embedded PGlite database (and of the sidecar's data unless BIMS_SIDECAR_DATA_DIR says otherwise). */
  BIMS_DATA_DIR: z.string().min(1).default('./data'),
  /** Password of the `admin` account, created on the first start only; unset: a random one is generated and printed once. */
  BIMS_ADMIN_PASSWORD: z.string().min(8, 'must be at least 8 characters').optional(),
  /** Public base URL of the service, used for OAuth redirects and the `auth_url`; defaults to http://HOST:PORT. */
  BIMS_BASE_URL: z.string().url().optional(),
  /** Issuer of the tokens and base of the OAuth endpoints, when they differ from BIMS_BASE_URL. */
  BIMS_AUTH_URL: z.string().url().optional(),
  /** Largest request body accepted, in bytes (413 above). Enrolment carries base64 images, hence the size. */
  BIMS_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(32 * 1024 * 1024),
  /**
   * Largest total of files one download (ZIP of images, voice recordings) may hold, in bytes; above it the
   * download answers 422. Stays far below 4 GiB because the ZIP writer has no ZIP64.
   */
  BIMS_MAX_DOWNLOAD_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(2 ** 31)
    .default(256 * 1024 * 1024),
  /** PBKDF2-SHA256 iterations for new password hashes (OWASP 2023 recommends 600,000). */
  BIMS_PASSWORD_ITERATIONS: z.coerce.number().int().min(10_000).max(10_000_000).default(600_000),
  /** Lifetime of an access token. */
  BIMS_ACCESS_TOKEN_SECONDS: z.coerce.number().int().min(30).max(86_400).default(900),
  /** Lifetime of a refresh token (they rotate at each use; reusing a spent one revokes its whole family). */
  BIMS_REFRESH_TOKEN_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .default(30 * 86_400),
  /** Signing keys older than this are replaced by a fresh one; older keys keep verifying until retired. */
  BIMS_SIGNING_KEY_ROTATION_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .default(30 * 86_400),
  // ---- login throttling (docs/login-throttling.md) ---------------------------------------------------------
  /** Failed logins for one account (or client) from one address answered at once; each further one waits longer. */
  BIMS_LOGIN_FREE_FAILURES: z.coerce.number().int().min(1).max(1000).default(5),
  /** The longest wait the growing delay (1 s, 2 s, 4 s, ...) reaches. */
  BIMS_LOGIN_MAX_DELAY_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  /** An (account, address) pair's failures are forgotten after this long without one. */
  BIMS_LOGIN_FORGET_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(7 * 86_400)
    .default(3600),
  /** Failed logins one address may make across all accounts per window before it is held to one guess per account. */
  BIMS_LOGIN_ADDRESS_FAILURES: z.coerce.number().int().min(1).max(1_000_000).default(100),
  /** The window the per-address budget is counted in. */
  BIMS_LOGIN_ADDRESS_WINDOW_SECONDS: z.coerce.number().int().min(60).max(86_400).default(900),

  // ---- extraction: faces and voice (docs/admission.md) -----------------------------------------------------
  /** Face extraction worker threads (Node); 0 means one per core. */
  BIMS_EXTRACTION_WORKERS: z.coerce.number().int().min(0).max(64).default(0),
  /**
   * What runs the face models in Node's extraction workers. `native`: onnxruntime-node, the same models and
   * processing compiled for this CPU (about half the CPU per face; templates interchangeable with wasm ones),
   * which `npm install` puts in tools/bench (or `npm run native-backend`); start-up fails naming that command when
   * it is missing. `wasm`: onnxruntime-web, the portable path the browser SDK, Deno and Cloudflare Workers share.
   * `auto` (default): native where onnxruntime-node is installed and loads on this host, else wasm, and the
   * start-up summary says which and why (docs/extraction.md). Deno and Workers always run wasm.
   */
  BIMS_EXTRACTION_BACKEND: z.enum(['auto', 'wasm', 'native']).default('auto'),
  /**
   * Threads that share a 1:N search on Node (docs/matcher.md): the gallery lives in shared memory and each
   * thread scans a slice. 0 = as many as the machine has cores; 1 = search on the event loop's thread only.
   * Threads start on the first search of a gallery partition of 32,768 templates or more (below that one thread
   * is faster than posting the work); Deno and Workers always search on one thread.
   */
  BIMS_MATCHER_THREADS: z.coerce.number().int().min(0).max(64).default(0),
  /**
   * Largest face image accepted, in decoded megapixels (width x height from the file's header, checked before
   * any decoding: 400 naming the field above it). A face needs far fewer: the detector sees 320x240 and the
   * token image 240x320; 16 covers a 12-megapixel phone camera (4032x3024) and a 4K frame with room to spare.
   */
  BIMS_MAX_IMAGE_MEGAPIXELS: z.coerce.number().min(0.1).max(100).default(16),
  /**
   * Extractions one account may have waiting at once (the queue holds 64 in all; the account served longest
   * ago goes next); more answer 429, so no account can fill the queue for the others.
   */
  BIMS_EXTRACTION_QUEUE_PER_ACCOUNT: z.coerce.number().int().min(1).max(64).default(32),
  /**
   * An extraction worker whose own memory passed this many MiB after a job is replaced by a fresh one (0:
   * never). A warm worker holds about 45; the JPEG decoder's memory grows to the largest image it saw and never
   * shrinks (a 16-megapixel image leaves a worker at about 190), and a replacement costs seconds of warm-up.
   */
  BIMS_EXTRACTION_WORKER_MAX_MB: z.coerce.number().int().min(0).max(65_536).default(160),
  /**
   * Milliseconds the costliest image admitted may spend decoding in an extraction worker (CPU time of its thread
   * on Linux, else wall time) before the worker is stopped where it runs and replaced (the request answers 400
   * DECODE_BUDGET_EXCEEDED); an image's budget is in proportion to the work its structure promises, never below a
   * quarter of this. Ten times what that image takes on a 2-core host: only a decode the cost bounds failed to
   * foresee meets it (docs/admission.md).
   */
  BIMS_EXTRACTION_DECODE_BUDGET_MS: z.coerce.number().int().min(1).max(600_000).default(8000),
  /**
   * A Node extraction service (`bims extraction-service`) to delegate face and voice extraction to, instead of
   * running the models in this process (Cloudflare Workers: no models in the isolate's 128 MB). Requires
   * BIMS_EXTRACTION_TOKEN.
   */
  BIMS_EXTRACTION_URL: z.string().url().optional(),
  /** Bearer token shared by the extraction service and its callers (32+ characters). */
  BIMS_EXTRACTION_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
  /** Where `bims extraction-service` listens. */
  BIMS_EXTRACTION_HOST: z.string().min(1).default('127.0.0.1'),
  /** Port `bims extraction-service` listens on. */
  BIMS_EXTRACTION_PORT: z.coerce.number().int().min(0).max(65535).default(7091),
  /**
   * The speaker encoder's ONNX file (or the folder holding resemblyzer_ge2e_fp16w.onnx), read instead of
   * wasm/models/ by Node's extraction (e.g. one built by `npm run voice-model -- --from pretrained.pt --out
   * FILE`). Accepted when it is the shipped file or reproduces its reference embedding (docs/voice.md).
   */
  BIMS_VOICE_MODEL: z.string().min(1).optional(),

  // ---- logs, CORS and the dashboard ------------------------------------------------------------------------
  /** Lowest level of log line written; `silent` writes none. */
  BIMS_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  /**
   * `json`: one JSON object per line (for log collectors); `pretty`: one readable line per entry, fields as
   * key=value; `auto`: pretty when standard output is a terminal, JSON otherwise (pipes, files, services).
   */
  BIMS_LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  /**
   * A Bearer token that may read `GET /metrics` (Prometheus text format) without an account, for a scraper
   * (`authorization: Bearer <token>` in its scrape config); 32+ characters. Unset: only ADMIN credentials read
   * the metrics (docs/metrics.md).
   */
  BIMS_METRICS_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
  /** Comma-separated origins allowed by CORS, or `*` for any; empty means CORS is closed. */
  BIMS_CORS_ORIGINS: z.string().default(''),
  /**
   * `on` (the test suite): the answers that go out without passing through their schema (the subject reads,
   * http/answer-check.ts) are checked to be exactly what the schema would make of them. Costs what it saves.
   */
  BIMS_CHECK_ANSWERS: z.enum(['on', 'off']).default('off'),
  /**
   * Where the dashboard component listens; the /dashboard proxy forwards there. Unset: `npm start` starts the
   * component itself on BIMS_DASHBOARD_HOST:BIMS_DASHBOARD_PORT and forwards there.
   */
  DASHBOARD_URL: z.string().url().optional(),
  /** Port of the dashboard component (`npm run dashboard`, or the child `npm start` runs); 0 picks a free one. */
  BIMS_DASHBOARD_PORT: z.coerce.number().int().min(0).max(65535).default(8081),
  /** Address the dashboard component listens on; loopback, since browsers reach it through the API's proxy. */
  BIMS_DASHBOARD_HOST: z.string().min(1).default('127.0.0.1'),
  /** Longest wait for the dashboard component's response headers before the proxy answers 502. */
  BIMS_DASHBOARD_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
  /**
   * Event streams (long-lived answers, which the proxy's GET serves without credentials) one client address
   * may hold open at once through the proxy; more answer 429.
   */
  BIMS_STREAMS_PER_ADDRESS: z.coerce.number().int().min(1).max(10_000).default(4),
  /** Event streams the process holds open at once through the proxy, whoever asked; more answer 503. */
  BIMS_STREAMS_TOTAL: z.coerce.number().int().min(1).max(100_000).default(64),

  // ---- the sidecar and the media gateway (Janus) -----------------------------------------------------------
  /** Whether `npm start` on Node starts the sidecar as a child process (`off` when it runs elsewhere). */
  BIMS_SIDECAR: z.enum(['on', 'off']).default('on'),
  /** Port the sidecar listens on, always on 127.0.0.1. */
  BIMS_SIDECAR_PORT: z.coerce.number().int().min(0).max(65535).default(7090),
  /** Where the API reaches the sidecar; defaults to http://127.0.0.1:BIMS_SIDECAR_PORT. */
  BIMS_SIDECAR_URL: z.string().url().optional(),
  /**
   * Shared secret the API presents to the sidecar as a Bearer token. `npm start` generates one for the child
   * it starts when unset; a sidecar run on its own (`npm run sidecar`) requires it.
   */
  BIMS_SIDECAR_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
  /** The Janus executable the sidecar runs (Debian package `janus`). */
  BIMS_JANUS_BIN: z.string().min(1).default('janus'),
  /** Folder holding Janus's plugins/, transports/, events/ and loggers/; found automatically when unset. */
  BIMS_JANUS_LIB_DIR: z.string().min(1).optional(),
  /** Janus API (HTTP transport) port on 127.0.0.1. */
  BIMS_JANUS_HTTP_PORT: z.coerce.number().int().min(1).max(65535).default(8088),
  /** Janus Admin API port on 127.0.0.1. */
  BIMS_JANUS_ADMIN_PORT: z.coerce.number().int().min(1).max(65535).default(7088),
  /** Secret every Janus API request must carry; random at each sidecar start when unset. */
  BIMS_JANUS_API_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Secret every Janus Admin API request must carry; random at each sidecar start when unset. */
  BIMS_JANUS_ADMIN_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Janus destroys sessions that receive no request for this long (BIMS keeps sessions in use alive). */
  BIMS_JANUS_SESSION_TIMEOUT: z.coerce.number().int().min(10).max(3600).default(60),
  /** Janus's own log level, 0 (none) to 7 (everything); its lines go to the sidecar's log at debug level. */
  BIMS_JANUS_LOG_LEVEL: z.coerce.number().int().min(0).max(7).default(3),
  /**
   * Interfaces or addresses Janus gathers ICE candidates on (comma-separated, Janus's `ice_enforce_list`);
   * empty means every interface but the loopback one, which Janus always skips.
   */
  BIMS_JANUS_ICE_ENFORCE_LIST: z.string().default(''),
  /** Longest wait for one answer from the sidecar or Janus before the operation answers 503. */
  BIMS_GATEWAY_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
  /** Longest wait for the plugin's asynchronous answer to a connect (the JSEP answer). */
  BIMS_GATEWAY_EVENT_TIMEOUT_MS: z.coerce.number().int().min(500).max(120_000).default(15_000),
  /**
   * How long the gateway session of a finished capture stays readable (getSession) before it is destroyed; its
   * outcome stays readable in trickleGateway answers for 10 minutes.
   */
  BIMS_CAPTURE_LINGER_SECONDS: z.coerce.number().int().min(0).max(600).default(30),
  /** Plugin attached when the request names none. */
  BIMS_GATEWAY_PLUGIN: z
    .string()
    .regex(/^[a-z0-9_.-]+$/, 'must be a plugin package name such as janus.plugin.echotest')
    .default('janus.plugin.echotest'),
  /** How often BIMS sends a keepalive for each session it keeps alive; below Janus's session timeout. */
  BIMS_GATEWAY_KEEPALIVE_SECONDS: z.coerce.number().int().min(1).max(300).default(15),
  /**
   * A session with no PeerConnection up and no call from its client for this long is destroyed: the client
   * is gone, so the session is no longer in use.
   */
  BIMS_GATEWAY_IDLE_SECONDS: z.coerce.number().int().min(1).max(86_400).default(120),
  /** `off`: the sidecar does not start Janus (licensing-only deployments, tests); the gateway then answers 503. */
  BIMS_JANUS: z.enum(['on', 'off']).default('on'),

  // ---- the fair share of the media gateway (docs/media-gateway.md, "Fair share") ------------------------------
  // Each pair is an owner's cap (an account, or an OAuth client acting for itself) and the whole service's; the
  // last per-account-many of the total are kept for owners that hold none, so the per-account cap may be at most
  // half the total. Counted in the database (sessions, captures) or by the one sidecar (decoders), so the caps
  // hold for the whole cluster, not per node.
  /**
   * Gateway sessions one account may hold at once (each holds a long poll and Janus threads); more answer 429.
   * A capture takes one.
   */
  BIMS_GATEWAY_SESSIONS_PER_ACCOUNT: z.coerce.number().int().min(1).max(10_000).default(8),
  /**
   * Gateway sessions the whole service holds at once; past it 503. Janus stopped answering in time at about a
   * thousand sessions with their polls; the default keeps well below.
   */
  BIMS_GATEWAY_SESSIONS_TOTAL: z.coerce.number().int().min(2).max(100_000).default(128),
  /** Handles one gateway session may attach (a capture needs one); more answer 429. */
  BIMS_GATEWAY_HANDLES_PER_SESSION: z.coerce.number().int().min(1).max(64).default(2),
  /** Unfinished captures one account may run at once; more answer 429. */
  BIMS_CAPTURES_PER_ACCOUNT: z.coerce.number().int().min(1).max(10_000).default(4),
  /**
   * Unfinished captures the whole service runs at once; past it 503. Each takes up to two decoders (video and
   * audio), so at most half BIMS_DECODERS_TOTAL keeps a decoder for every capture admitted.
   */
  BIMS_CAPTURES_TOTAL: z.coerce.number().int().min(2).max(100_000).default(16),
  /** Media decoders (ffmpeg processes) the sidecar runs for one account at once. */
  BIMS_DECODERS_PER_ACCOUNT: z.coerce.number().int().min(1).max(10_000).default(8),
  /** Media decoders the sidecar runs at once, for everyone. */
  BIMS_DECODERS_TOTAL: z.coerce.number().int().min(2).max(100_000).default(32),
  /**
   * A capture that has seen no face (no speech, for a voice-only one) for this long ends (TIMEOUT) and gives
   * its decoder, room and place back, whatever its own timeoutSeconds.
   */
  BIMS_CAPTURE_IDLE_SECONDS: z.coerce.number().int().min(2).max(600).default(30),
  /**
   * A capture whose analysed frames failed for the same reason (too dark, too far, turned away, eyes closed, two
   * faces, no live person) for this long ends with that reason instead of running to its timeout.
   */
  BIMS_CAPTURE_PATIENCE_SECONDS: z.coerce.number().int().min(2).max(600).default(10),

  // ---- licensing -------------------------------------------------------------------------------------------
  /**
   * The vendor's Ed25519 public key that licences and dongle updates must be signed with: a JWK (JSON) or an
   * SPKI PEM. Unset: the service runs UNLICENSED and unlimited, and says so in every licensing answer.
   */
  BIMS_LICENCE_PUBLIC_KEY: z.string().min(40).optional(),
  /** Where the licence comes from; unset: CLOUD when a cloud URL is set, INTERNET when a licence is given, else DONGLE. */
  BIMS_LICENCE_SOURCE: z.enum(['CLOUD', 'INTERNET', 'DONGLE']).optional(),
  /** An INTERNET licence (the compact JWS), activated once: stored in the database on first start. */
  BIMS_LICENCE: z.string().min(20).optional(),
  /** A file holding the INTERNET licence; read by the Node entries into BIMS_LICENCE (edge runtimes have no files). */
  BIMS_LICENCE_FILE: z.string().min(1).optional(),
  /** The CLOUD licensing endpoint: GET with the token answers the licence (a compact JWS, or JSON {licence}). */
  BIMS_LICENCE_CLOUD_URL: z.string().url().optional(),
  /** Bearer token the CLOUD licensing endpoint is fetched with. */
  BIMS_LICENCE_CLOUD_TOKEN: z.string().min(8).optional(),
  /** How long a fetched cloud licence (and a dongle's) is used before it is fetched again. */
  BIMS_LICENCE_REFRESH_SECONDS: z.coerce.number().int().min(1).max(86_400).default(3600),

  // ---- gallery replication between nodes (docs/gallery-replication.md) ----------------------------------------
  /**
   * How often each node compares its in-memory gallery with the database (a digest of every gallery template)
   * and reloads it on a difference; 0: only after the LISTEN connection comes back. One aggregate query over
   * the gallery's rows, so minutes, not seconds, on large galleries.
   */
  BIMS_GALLERY_RECONCILE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(300),

  // ---- a gallery past one machine: matcher shards over NATS (docs/scale-out.md) -------------------------------
  /**
   * NATS server(s), comma-separated (`nats://host:4222,nats://other:4222`; user and password or a token in the URL
   * when the servers ask for them). Set: the gallery is held by `bims matcher` shard processes and every 1:N and
   * 1:1 search is sent to them; this process loads no template. Needs PostgreSQL (DATABASE_URL). Unset: the gallery
   * lives in this process (the default). Node only.
   */
  BIMS_NATS_URL: z
    .string()
    .regex(/^(nats|tls):\/\/[^,\s]+(,(nats|tls):\/\/[^,\s]+)*$/, 'must be nats:// or tls:// URLs, comma-separated')
    .optional(),
  /**
   * How many shards the gallery is split into (subject slot ranges, docs/scale-out.md). API nodes and matcher
   * processes must agree; each shard needs at least one running `bims matcher` holding it.
   */
  BIMS_MATCHER_SHARDS: z.coerce.number().int().min(1).max(32_768).default(1),
  /**
   * How long a search waits for every shard's answer (a replica that died holding the request is retried on
   * another within it); past it the operation answers 503 (component `matcher`), never a partial candidate list.
   */
  BIMS_MATCHER_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(5000),
  /** First token of the matcher subjects on NATS (`<prefix>.matcher.<shards>.<shard>`): deployments sharing a NATS cluster pick different ones. */
  BIMS_NATS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, 'must be one NATS subject token (letters, digits, - and _)')
    .default('bims'),

  // ---- licence keys (dongles) --------------------------------------------------------------------------------
  /** USB ids (vendor:product hex, `*` for any product) the sidecar counts as licence keys. */
  BIMS_DONGLE_USB_IDS: z.string().default('0529:*,064f:*'),
  /** Where the sidecar reads USB devices from (tests point it at a fake tree). */
  BIMS_DONGLE_SYSFS_ROOT: z.string().min(1).default('/sys/bus/usb/devices'),
  /** `auto`: the sidecar offers a file-backed software dongle when no hardware key is present; `off`: never. */
  BIMS_SOFTWARE_DONGLE: z.enum(['auto', 'off']).default('auto'),
  /** The sidecar's own data (the software dongle); defaults to BIMS_DATA_DIR/sidecar. */
  BIMS_SIDECAR_DATA_DIR: z.string().min(1).optional(),

  // ---- install and tools (read by npm scripts, not by the service) -------------------------------------------
  /**
   * `1`: `npm install` (postinstall) does not fetch the face and voice models; faces and voice stay off until
   * `node scripts/fetch-models.mjs` and `node scripts/fetch-voice-model.mjs` have run.
   */
  BIMS_SKIP_MODELS: z.string().optional(),
  /**
   * `1`: `npm install` (postinstall) does not install the native extraction backend (onnxruntime-node in
   * tools/bench); `BIMS_EXTRACTION_BACKEND=auto` then runs the face models on wasm until `npm run native-backend`.
   */
  BIMS_SKIP_NATIVE: z.string().optional(),
  /**
   * Where scripts/tool.mjs keeps the tools/ installs (wrangler, deno, onnxruntime-node, Spectral, Node 22) once per
   * machine, shared by every clone; unset, `$XDG_CACHE_HOME/bims/tools` or `~/.cache/bims/tools`.
   */
  BIMS_TOOLS_STORE: z.string().optional(),
  /** Password of the account `npm run bench -- load` signs in with against a running service (or its --password option). */
  BIMS_BENCH_PASSWORD: z.string().optional(),
});

export type Config = z.infer<typeof configSchema>;

/** Raised when the environment does not describe a valid configuration; the message names every bad key. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Parse configuration from an environment record. Empty strings count as unset, so `PORT=` falls back to
 * the default rather than failing.
 *
 * @example loadConfig({ PORT: '9000' }).PORT === 9000
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const present: Record<string, string> = {};
  for (const key of Object.keys(configSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') present[key] = value;
  }
  const parsed = configSchema.safeParse(present);
  const lines = parsed.success ? [] : parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
  if (present.BIMS_EXTRACTION_URL && !present.BIMS_EXTRACTION_TOKEN)
    lines.push('  BIMS_EXTRACTION_TOKEN: required when BIMS_EXTRACTION_URL is set');
  if (present.BIMS_NATS_URL && !present.DATABASE_URL)
    lines.push(
      '  BIMS_NATS_URL: a matcher cluster needs PostgreSQL (DATABASE_URL): its shard processes read the same database',
    );
  if (parsed.success) lines.push(...fairShareProblems(parsed.data));
  if (!parsed.success || lines.length) throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  return parsed.data;
}

/** Each per-account cap must leave the total's reserve (as large as the cap) to the others. */
function fairShareProblems(config: Config): string[] {
  const pairs = [
    ['BIMS_GATEWAY_SESSIONS_PER_ACCOUNT', 'BIMS_GATEWAY_SESSIONS_TOTAL'],
    ['BIMS_CAPTURES_PER_ACCOUNT', 'BIMS_CAPTURES_TOTAL'],
    ['BIMS_DECODERS_PER_ACCOUNT', 'BIMS_DECODERS_TOTAL'],
  ] as const;
  return pairs
    .filter(([perAccount, total]) => config[perAccount] * 2 > config[total])
    .map(([perAccount, total]) => `  ${perAccount}: must be at most half ${total} (${config[total]})`);
}

/**
 * Deno and Cloudflare Workers start without a matcher cluster: the NATS client BIMS uses runs on Node, and an
 * isolate holds no connection between requests (docs/scale-out.md, "Workers and Deno"). Rather than load the whole
 * gallery in the process that was meant not to hold it, their start-up refuses the setting.
 */
export function refuseMatcherCluster(config: Config, runtime: string): Config {
  if (config.BIMS_NATS_URL)
    throw new ConfigError(
      `Invalid configuration:\n  BIMS_NATS_URL: a matcher cluster is reached from Node API nodes only; unset it on ${runtime} (docs/scale-out.md)`,
    );
  return config;
}

/** The extraction pool's admission settings (the worker-thread pool's options). */
export function poolLimitsOf(config: Config): {
  maxQueuePerOwner: number;
  decodeBudgetMs: number;
  maxWorkerMemoryBytes?: number;
} {
  return {
    maxQueuePerOwner: config.BIMS_EXTRACTION_QUEUE_PER_ACCOUNT,
    decodeBudgetMs: config.BIMS_EXTRACTION_DECODE_BUDGET_MS,
    ...(config.BIMS_EXTRACTION_WORKER_MAX_MB > 0
      ? { maxWorkerMemoryBytes: config.BIMS_EXTRACTION_WORKER_MAX_MB * 2 ** 20 }
      : {}),
  };
}

/** Where the API reaches the sidecar. */
export function sidecarUrlOf(config: Config): string {
  return (config.BIMS_SIDECAR_URL ?? `http://127.0.0.1:${config.BIMS_SIDECAR_PORT}`).replace(/\/$/, '');
}

/** The base URL clients use to reach this service. */
export function baseUrlOf(config: Config): string {
  if (config.BIMS_BASE_URL) return config.BIMS_BASE_URL.replace(/\/$/, '');
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.PORT}`;
}
