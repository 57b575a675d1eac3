import { z } from 'zod';

/**
 * The test suite's own switches: read by `npm test` and the tests, never by the service, so they are not in
 * the service's configuration schema (src/config/config.ts). docs/configuration.md lists them in a section of
 * their own, generated from this schema the same way (scripts/config-docs.ts).
 */
export const testSettingsSchema = z.object({
  // ---- the test suite (read by npm test and the tests, not by the service) -----------------------------------
  /**
   * Comma-separated dialects the repository and HTTP suites run on (`pglite`, `postgres`); unset: PGlite, and
   * PostgreSQL too when DATABASE_URL is set (`npm run test:postgres` sets `postgres`).
   */
  BIMS_TEST_DIALECTS: z.string().optional(),
  /**
   * How the real WebRTC test reaches Janus (docs/media-gateway.md): `isolated` (a veth pair into a network
   * namespace; needs root), `host` (the host's own addresses), `auto` (isolated when it can be made). Unset:
   * isolated as root, auto otherwise.
   */
  BIMS_TEST_MEDIA_NET: z.enum(['isolated', 'host', 'auto']).optional(),
  /** Seed of the generated bad-input suite (test/security/bad-input.test.ts); a failure prints the one to reproduce it with. */
  BIMS_FUZZ_SEED: z.coerce.number().int().nonnegative().optional(),
  /** Log level of the sidecars the tests start (default `silent`), to see what Janus and the sidecar did. */
  BIMS_TEST_SIDECAR_LOG: z.string().optional(),
});

/** The suite's switches from this process's environment (an empty value counts as unset, as for the service). */
export function testSettings(
  env: Record<string, string | undefined> = process.env,
): z.infer<typeof testSettingsSchema> {
  const set = Object.fromEntries(
    Object.keys(testSettingsSchema.shape)
      .filter((key) => env[key])
      .map((key) => [key, env[key]]),
  );
  return testSettingsSchema.parse(set);
}
