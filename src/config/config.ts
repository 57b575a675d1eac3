import { z } from 'zod';

/**
 * Every setting of the process, read from an environment-like record (Node's `process.env`, Deno's
 * `Deno.env.toObject()`, a Workers `env` binding). Runtime entries call {@link loadConfig}; nothing else
 * reads the environment, so the core stays portable and testable.
 */
export const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL (unset it to use the embedded PGlite)')
    .optional(),
  BIMS_DATA_DIR: z.string().min(1).default('./data'),
  BIMS_ADMIN_PASSWORD: z.string().min(8, 'must be at least 8 characters').optional(),
  /** Public base URL of the service, used for OAuth redirects and the `auth_url`; defaults to http://HOST:PORT. */
  BIMS_BASE_URL: z.string().url().optional(),
  BIMS_AUTH_URL: z.string().url().optional(),
  /** Largest request body accepted, in bytes (413 above). Enrolment carries base64 images, hence the size. */
  BIMS_MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(32 * 1024 * 1024),
  /** PBKDF2-SHA256 iterations for new password hashes (OWASP 2023 recommends 600,000). */
  BIMS_PASSWORD_ITERATIONS: z.coerce.number().int().min(10_000).max(10_000_000).default(600_000),
  BIMS_ACCESS_TOKEN_SECONDS: z.coerce.number().int().min(30).max(86_400).default(900),
  BIMS_REFRESH_TOKEN_SECONDS: z.coerce.number().int().min(60).default(30 * 86_400),
  /** Signing keys older than this are replaced by a fresh one; older keys keep verifying until retired. */
  BIMS_SIGNING_KEY_ROTATION_SECONDS: z.coerce.number().int().min(60).default(30 * 86_400),
  BIMS_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  /** Comma-separated origins allowed by CORS; empty means CORS is closed. */
  BIMS_CORS_ORIGINS: z.string().default(''),
  /** Where the dashboard component listens; the /dashboard proxy forwards there. */
  DASHBOARD_URL: z.string().url().optional(),
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
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

/** The base URL clients use to reach this service. */
export function baseUrlOf(config: Config): string {
  if (config.BIMS_BASE_URL) return config.BIMS_BASE_URL.replace(/\/$/, '');
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.PORT}`;
}
