// The sidecar as `npm start` runs it, for the capture benches (--sidecar child): its own Node process
// (src/runtime/node-sidecar.ts forks the same entry), so the decoders' ffmpeg processes are forked from a
// small process instead of from the one holding the service, its extraction pool and PGlite. Forking that one
// stopped its event loop for 340-490 ms per decoder at load 28 (bench capture --stages --trace), which the
// connect's answer then waited for; a user's service never forks ffmpeg itself.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createLogger } from '../src/logger.js';
import { superviseChild } from '../src/runtime/supervised-child.js';
import { freePorts } from '../test/support/ports.js';

const ENTRY = fileURLToPath(new URL('../src/sidecar/main.ts', import.meta.url));

export interface ChildSidecar {
  token: string;
  /** What the API needs to reach it. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** Start the sidecar (and its Janus) in a child process; `env` adds configuration, e.g. the ICE enforce list. */
export async function startChildSidecar(env: Record<string, string> = {}): Promise<ChildSidecar> {
  const [httpPort, adminPort] = await freePorts(2);
  const token = randomBytes(32).toString('base64url');
  let url: string | undefined;
  const child = await superviseChild({
    name: 'sidecar',
    entry: ENTRY,
    env: () => ({
      ...process.env,
      BIMS_SIDECAR_PORT: '0',
      BIMS_SIDECAR_TOKEN: token,
      BIMS_JANUS_HTTP_PORT: String(httpPort),
      BIMS_JANUS_ADMIN_PORT: String(adminPort),
      BIMS_LOG_LEVEL: process.env.BIMS_TEST_SIDECAR_LOG ?? 'warn',
      ...env,
    }),
    meanwhile: 'the bench cannot run',
    onReady: (ready) => {
      url ??= ready;
    },
    log: createLogger('warn'),
  });
  if (!url) {
    await child.stop();
    throw new Error('the sidecar did not start (is Janus installed? scripts/ensure-janus.sh)');
  }
  return { token, env: { BIMS_SIDECAR_URL: url, BIMS_SIDECAR_TOKEN: token }, stop: () => child.stop() };
}
