import { randomBytes } from 'node:crypto';
import { freePorts } from './ports.js';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/logger.js';
import { startSidecar, type RunningSidecar } from '../../src/sidecar/start.js';
import { testSettings } from './test-settings.js';

export interface TestSidecar {
  sidecar: RunningSidecar;
  token: string;
  /** What the API needs to reach this sidecar, for bootForTest. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * A real sidecar with a real Janus for one suite, on ports of its own so suites can run side by side.
 * `env` adds or overrides configuration (e.g. Janus's session timeout).
 */
export async function startTestSidecar(env: Record<string, string> = {}): Promise<TestSidecar> {
  const [httpPort, adminPort] = await freePorts(2);
  const token = randomBytes(32).toString('base64url');
  const config = loadConfig({
    BIMS_SIDECAR_PORT: '0',
    BIMS_SIDECAR_TOKEN: token,
    BIMS_JANUS_HTTP_PORT: String(httpPort),
    BIMS_JANUS_ADMIN_PORT: String(adminPort),
    BIMS_LOG_LEVEL: testSettings().BIMS_TEST_SIDECAR_LOG ?? 'silent',
    ...env,
  });
  const sidecar = await startSidecar(config, createLogger(config.BIMS_LOG_LEVEL));
  if (sidecar.janus.snapshot().state !== 'running') {
    const { lastError } = sidecar.janus.snapshot();
    await sidecar.stop();
    throw new Error(`Janus did not start: ${lastError} (is it installed? scripts/ensure-janus.sh)`);
  }
  return {
    sidecar,
    token,
    env: { BIMS_SIDECAR_URL: sidecar.url, BIMS_SIDECAR_TOKEN: token },
    stop: () => sidecar.stop(),
  };
}
