import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/config.js';
import type { Logger } from '../logger.js';
import { superviseChild } from './supervised-child.js';

/** The sidecar's entry, run as a separate Node process with the same loader (tsx) as this one; compiled in a build. */
const entry = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? '../sidecar/main.ts' : '../sidecar/main.js', import.meta.url),
);

export interface SidecarChild {
  /** The configuration the API should use: the sidecar's token and address filled in. */
  config: Config;
  stop(): Promise<void>;
}

/**
 * Start the sidecar as a child process for `npm start` (unless BIMS_SIDECAR=off), sharing a token generated
 * here when none is configured. The API starts even when the sidecar does not: gateway operations then answer
 * 503 until it is up. A sidecar that dies is started again, with a growing delay.
 */
export async function startSidecarChild(config: Config, log: Logger): Promise<SidecarChild> {
  const token = config.BIMS_SIDECAR_TOKEN ?? randomBytes(32).toString('base64url');
  let url = config.BIMS_SIDECAR_URL;
  const child = await superviseChild({
    name: 'sidecar',
    entry,
    env: () => ({ ...process.env, BIMS_SIDECAR_TOKEN: token }),
    meanwhile: 'the media gateway answers 503',
    onReady: (ready) => {
      url ??= ready;
    },
    log,
  });
  return {
    config: {
      ...config,
      BIMS_SIDECAR_TOKEN: token,
      BIMS_SIDECAR_URL: url ?? `http://127.0.0.1:${config.BIMS_SIDECAR_PORT}`,
    },
    stop: () => child.stop(),
  };
}
