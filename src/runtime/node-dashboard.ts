import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/config.js';
import type { Logger } from '../services/logger.js';

/** The dashboard's entry, run as a separate Node process with the same loader (tsx) as this one. */
// Compiled in the npm package (dist/src/runtime/*.js), where the entry is main.js.
const entry = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../dashboard/main.ts' : '../dashboard/main.js', import.meta.url));
/** The parent's Node flags, plus tsx's loader for a TypeScript entry when the parent got TypeScript some other way (a test runner). */
const execArgv = !entry.endsWith('.ts') || process.execArgv.some((a) => a.includes('tsx')) ? process.execArgv : [...process.execArgv, '--import', 'tsx'];

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
  let child: ChildProcess | null = null;
  let stopping = false;
  let delay = 1000;
  let url = `http://${config.BIMS_DASHBOARD_HOST.includes(':') ? `[${config.BIMS_DASHBOARD_HOST}]` : config.BIMS_DASHBOARD_HOST}:${config.BIMS_DASHBOARD_PORT}`;
  let port = config.BIMS_DASHBOARD_PORT;

  const launch = () =>
    new Promise<void>((resolve) => {
      const started = Date.now();
      // A restart keeps the port the first start got, so the address the proxy uses stays right.
      const proc = fork(entry, [], { execArgv, env: { ...process.env, BIMS_DASHBOARD_PORT: String(port) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      child = proc;
      const timer = setTimeout(() => {
        log.warn('the dashboard did not report ready within 20 s; /dashboard/ answers 502 meanwhile');
        resolve();
      }, 20_000);
      proc.on('message', (message: { type?: string; url?: string }) => {
        if (message?.type !== 'ready' || !message.url) return;
        url = message.url;
        port = Number(new URL(message.url).port);
        clearTimeout(timer);
        delay = 1000;
        resolve();
      });
      proc.on('exit', (code, signal) => {
        clearTimeout(timer);
        resolve();
        if (stopping || child !== proc) return;
        child = null;
        if (Date.now() - started > 60_000) delay = 1000;
        log.error('the dashboard exited; starting it again', { code, signal, inMs: delay });
        setTimeout(() => void (stopping ? undefined : launch()), delay).unref();
        delay = Math.min(delay * 2, 30_000);
      });
    });

  await launch();
  return {
    config: { ...config, DASHBOARD_URL: url },
    async stop() {
      stopping = true;
      const proc = child as ChildProcess | null;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 8000);
      await exited;
      clearTimeout(timer);
    },
  };
}
