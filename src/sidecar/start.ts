import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import type { Config } from '../config/config.js';
import type { Logger } from '../logger.js';
import { JanusSupervisor } from './janus-supervisor.js';
import { createSidecarApp } from './server.js';
import { Dongles } from './dongles/dongles.js';
import { parseUsbIds } from './dongles/usb.js';
import { importLicenceKey } from '../licensing/verify.js';

export interface RunningSidecar {
  /** Where the sidecar listens, e.g. http://127.0.0.1:7090. */
  url: string;
  janus: JanusSupervisor;
  dongles: Dongles;
  stop(): Promise<void>;
}

/**
 * Start the sidecar: its HTTP interface on 127.0.0.1:BIMS_SIDECAR_PORT (0 picks a free port) and Janus under
 * supervision (unless BIMS_JANUS=off), and the licence dongles. Resolves once Janus's first start is over, so callers can use the gateway at once.
 */
export async function startSidecar(
  config: Config,
  log: Logger,
  options: { janus?: Partial<ConstructorParameters<typeof JanusSupervisor>[0]> } = {},
): Promise<RunningSidecar> {
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
  const dongles = new Dongles({
    usbIds: parseUsbIds(config.BIMS_DONGLE_USB_IDS),
    sysfsRoot: config.BIMS_DONGLE_SYSFS_ROOT,
    software: config.BIMS_SOFTWARE_DONGLE,
    dataDir: config.BIMS_SIDECAR_DATA_DIR ?? join(config.BIMS_DATA_DIR, 'sidecar'),
    vendorKey: config.BIMS_LICENCE_PUBLIC_KEY ? await importLicenceKey(config.BIMS_LICENCE_PUBLIC_KEY) : null,
  });
  const decoderCaps = { perOwner: config.BIMS_DECODERS_PER_ACCOUNT, total: config.BIMS_DECODERS_TOTAL };
  const app = createSidecarApp({ token, janus, dongles, log, decoderCaps });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: config.BIMS_SIDECAR_PORT, hostname: '127.0.0.1' }, () => resolve(s));
    s.once('error', reject);
  });
  // No idle timeout of the server's own on kept-alive connections: its callers (the API's fetch) close theirs after
  // 4 s idle, or after the server's advertised timeout less 1 s. With the server closing at 5 s, a caller whose
  // event loop was held up past that margin sent its next request on a connection the sidecar had just closed
  // (ECONNRESET, "other side closed": 3 connects and trickles failed so in bench capture --sessions at load 40).
  // Requests still have their header and request timeouts; the sidecar listens on loopback only.
  (server as unknown as { keepAliveTimeout: number }).keepAliveTimeout = 0;
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  log.info('sidecar listening', { url });
  // BIMS_JANUS=off: no media gateway here (it stays `stopped`, so gateway operations answer 503).
  if (config.BIMS_JANUS === 'on') await janus.start();
  else log.info('Janus not started (BIMS_JANUS=off)');
  return {
    url,
    janus,
    dongles,
    async stop() {
      app.stopDecoders();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      await janus.stop();
    },
  };
}
