import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Config } from '../config/config.js';
import type { Logger } from '../services/logger.js';
import { JanusSupervisor } from './janus-supervisor.js';
import { createSidecarApp } from './server.js';

export interface RunningSidecar {
  /** Where the sidecar listens, e.g. http://127.0.0.1:7090. */
  url: string;
  janus: JanusSupervisor;
  stop(): Promise<void>;
}

/**
 * Start the sidecar: its HTTP interface on 127.0.0.1:BIMS_SIDECAR_PORT (0 picks a free port) and Janus under
 * supervision. Resolves once Janus's first start is over, so callers can use the gateway at once.
 */
export async function startSidecar(config: Config, log: Logger, options: { janus?: Partial<ConstructorParameters<typeof JanusSupervisor>[0]> } = {}): Promise<RunningSidecar> {
  const token = config.BIMS_SIDECAR_TOKEN;
  if (!token) throw new Error('BIMS_SIDECAR_TOKEN is not set: the sidecar accepts no caller without it');
  const janus = new JanusSupervisor({
    bin: config.BIMS_JANUS_BIN,
    libDir: config.BIMS_JANUS_LIB_DIR,
    httpPort: config.BIMS_JANUS_HTTP_PORT,
    adminPort: config.BIMS_JANUS_ADMIN_PORT,
    // Random per start unless configured: only callers holding the sidecar token ever learn them.
    apiSecret: config.BIMS_JANUS_API_SECRET ?? randomBytes(24).toString('base64url'),
    adminSecret: config.BIMS_JANUS_ADMIN_SECRET ?? randomBytes(24).toString('base64url'),
    sessionTimeout: config.BIMS_JANUS_SESSION_TIMEOUT,
    logLevel: config.BIMS_JANUS_LOG_LEVEL,
    iceEnforceList: config.BIMS_JANUS_ICE_ENFORCE_LIST,
    log,
    ...options.janus,
  });
  const app = createSidecarApp({ token, janus });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: config.BIMS_SIDECAR_PORT, hostname: '127.0.0.1' }, () => resolve(s));
    s.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  log.info('sidecar listening', { url });
  await janus.start();
  return {
    url,
    janus,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      await janus.stop();
    },
  };
}
