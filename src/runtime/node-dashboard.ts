import { fileURLToPath } from 'node:url';
import type { Config } from '../config/config.js';
import type { Logger } from '../logger.js';
import { superviseChild } from './supervised-child.js';

/** The dashboard's entry, run as a separate Node process with the same loader (tsx) as this one. */
// Compiled in the npm package (dist/src/runtime/*.js), where the entry is main.js.
const entry = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? '../dashboard/main.ts' : '../dashboard/main.js', import.meta.url),
);
/** The parent's Node flags, plus tsx's loader for a TypeScript entry when the parent got TypeScript some other way (a test runner). */
const execArgv =
  !entry.endsWith('.ts') || process.execArgv.some((a) => a.includes('tsx'))
    ? process.execArgv
    : [...process.execArgv, '--import', 'tsx'];

export interface DashboardChild {
  /** The configuration the API should use: DASHBOARD_URL set to where the child listens. */
  config: Config;
  stop(): Promise<void>;
}

/**
 * Start the dashboard component as a child process for `npm start` (when DASHBOARD_URL does not point
 * elsewhere). The API starts even when the dashboard does not: the proxy answers 502 until it is up. A
 * dashboard that dies is started again, with a growing delay, on the same address.
 */
export async function startDashboardChild(config: Config, log: Logger): Promise<DashboardChild> {
  let url = `http://${config.BIMS_DASHBOARD_HOST.includes(':') ? `[${config.BIMS_DASHBOARD_HOST}]` : config.BIMS_DASHBOARD_HOST}:${config.BIMS_DASHBOARD_PORT}`;
  let port = config.BIMS_DASHBOARD_PORT;
  const child = await superviseChild({
    name: 'dashboard',
    entry,
    execArgv,
    // A restart keeps the port the first start got, so the address the proxy uses stays right.
    env: () => ({ ...process.env, BIMS_DASHBOARD_PORT: String(port) }),
    meanwhile: '/dashboard/ answers 502',
    onReady: (ready) => {
      if (!ready) return;
      url = ready;
      port = Number(new URL(ready).port);
    },
    log,
  });
  return { config: { ...config, DASHBOARD_URL: url }, stop: () => child.stop() };
}
