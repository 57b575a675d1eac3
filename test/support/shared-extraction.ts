import { testSettings } from './test-settings.js';

/**
 * The environment that points a service process at the run's one extraction service (started by `npm test`,
 * BIMS_TEST_EXTRACTION_URL) through the production remote path, BIMS_EXTRACTION_URL: the process warms no worker
 * pool of its own (about 2 CPU-s a start). Empty when the suite runs without `npm test`: the process keeps its own
 * pool. For suites whose subject is not the extraction pool, and whose outcomes do not depend on where extraction
 * runs; those about the pool, the entry, or races timed by extraction keep their own.
 */
export function sharedExtraction(): Record<string, string> {
  const { BIMS_TEST_EXTRACTION_URL: url, BIMS_TEST_EXTRACTION_TOKEN: token } = testSettings();
  return url && token ? { BIMS_EXTRACTION_URL: url, BIMS_EXTRACTION_TOKEN: token } : {};
}

/**
 * DASHBOARD_URL for a service process whose suite never asks for /dashboard: the process starts no dashboard
 * child (a second Node process per start). Nothing listens there; a request would be answered as unreachable.
 */
export const NO_DASHBOARD = { DASHBOARD_URL: 'http://127.0.0.1:9' };
