import { z } from 'zod';

/**
 * The test suite's own switches: read by `npm test` and the tests, never by the service, so they are not in
 * the service's configuration schema (src/config/config.ts). docs/configuration.md lists them in a section of
 * their own, generated from this schema the same way (scripts/config-docs.ts).
 */
export const testSettingsSchema = z.object({
  // ---- the test suite (read by npm test and the tests, not by the service) -----------------------------------
  /**
   * Comma-separated dialects the suites run on (`pglite`, `postgres`). Unset: the repository suites and those
   * whose behaviour differs by dialect run on PGlite, and on PostgreSQL too when DATABASE_URL is set; the other
   * HTTP and security suites on PGlite only (test/support/databases.ts). Set, it chooses for every suite
   * (`npm run test:postgres` sets `postgres`).
   */
  BIMS_TEST_DIALECTS: z.string().optional(),
  /**
   * How the real WebRTC test reaches Janus (docs/media-gateway.md): `isolated` (a veth pair into a network
   * namespace; needs root), `host` (the host's own addresses), `auto` (isolated when it can be made). Unset:
   * isolated as root, auto otherwise.
   */
  BIMS_TEST_MEDIA_NET: z.enum(['isolated', 'host', 'auto']).optional(),
  /**
   * Seed of the generated bad-input suite (test/security/bad-input.test.ts); unset, a fixed one, or a fresh one with
   * BIMS_TEST_FULL=1. A failure prints the one to reproduce it with.
   */
  BIMS_FUZZ_SEED: z.coerce.number().int().nonnegative().optional(),
  /**
   * What answers the face and voice analyses of the HTTP, security and gateway suites
   * (test/support/extractor.ts): unset, the real pipeline's answers replayed from recordings in the
   * machine's cache, ~/.cache/bims/recorded-analyses/ (bytes not yet recorded go to the real pipeline and are recorded); `replay`,
   * recordings only (bytes never recorded fail the test); `real`, the real worker pool for every call.
   */
  BIMS_TEST_EXTRACTOR: z.enum(['recorded', 'replay', 'real']).optional(),
  /**
   * `1`: the trial and fuzz suites run their full budget (more trials, more generated requests) instead of the
   * standard one `npm test` runs, and the generated suite a fresh seed instead of its fixed one.
   */
  BIMS_TEST_FULL: z.enum(['0', '1']).optional(),
  /**
   * A file each test file appends a JSON line to: its project, path, and the CPU seconds it cost (the worker
   * process, its threads, and the child processes it waited for) beside its wall seconds
   * (test/support/setup-cpu-log.ts). `npm run test:cpu -- FILE` sums them per project.
   */
  BIMS_TEST_CPU_LOG: z.string().optional(),
  /**
   * `off`: every suite that boots on PGlite opens a migrated instance of its own, as before the pool; unset, a test
   * process lends its instances to suite after suite, reset between them (test/support/pglite-pool.ts). To compare
   * the two, or to rule the pool out when a suite sees another's rows.
   */
  BIMS_TEST_PGLITE_POOL: z.enum(['off']).optional(),
  /** Log level of the sidecars the tests start (default `silent`), to see what Janus and the sidecar did. */
  BIMS_TEST_SIDECAR_LOG: z.string().optional(),
  /**
   * Set by `npm test` (scripts/test.mjs) once it has built dist/ for this run: `dist`, and the service, matcher and
   * extraction processes the suites start run the compiled entries (dist/src/runtime/...js) instead of the sources
   * through tsx. Unset (a suite run with `npx vitest run FILE`), they run the sources, so a stale dist/ is never used.
   */
  BIMS_TEST_BUILD: z.enum(['dist']).optional(),
  /**
   * Set by `npm test`: the URL of the one extraction service (`bims extraction-service`, 2 workers) it starts for the
   * whole run. The service processes of the suites whose subject is not the extraction pool delegate to it
   * (BIMS_EXTRACTION_URL) instead of warming a pool each (test/support/shared-extraction.ts).
   */
  BIMS_TEST_EXTRACTION_URL: z.string().url().optional(),
  /** Set by `npm test`: the random Bearer token of that extraction service (BIMS_EXTRACTION_TOKEN). */
  BIMS_TEST_EXTRACTION_TOKEN: z.string().min(32).optional(),
  /**
   * Test files at once in the one group of every project but runtime-alone (vitest.config.ts): unset, 3. Many suites
   * wait on the processes they start (Chromium, Janus, services) or on PostgreSQL; the bound-in-seconds suites
   * run after them, one at a time.
   */
  BIMS_TEST_WORKERS: z.coerce.number().int().min(1).max(8).optional(),
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

/**
 * The budget of a trial or fuzz suite (trials, generated requests): `standard` in `npm test`, `full` with
 * BIMS_TEST_FULL=1. A suite states both, and why the standard one still finds what it looks for.
 */
export function trialBudget(standard: number, full: number): number {
  return testSettings().BIMS_TEST_FULL === '1' ? full : standard;
}

/**
 * The seed of a generated suite: BIMS_FUZZ_SEED when given; else `fixed` in `npm test`, so that every run sends
 * the same requests, and a fresh random one with BIMS_TEST_FULL=1, so that full runs explore. The suite prints
 * it with any failure.
 */
export function fuzzSeed(fixed: number): number {
  const settings = testSettings();
  if (settings.BIMS_FUZZ_SEED !== undefined) return settings.BIMS_FUZZ_SEED;
  return settings.BIMS_TEST_FULL === '1' ? Math.floor(Math.random() * 2 ** 31) : fixed;
}
