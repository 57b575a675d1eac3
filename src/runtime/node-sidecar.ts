import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/config.js';
import type { Logger } from '../services/logger.js';

/** The sidecar's entry, run as a separate Node process with the same loader (tsx) as this one; compiled in a build. */
const entry = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../sidecar/main.ts' : '../sidecar/main.js', import.meta.url));

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
  let child: ChildProcess | null = null;
  let stopping = false;
  let delay = 1000;
  let url = config.BIMS_SIDECAR_URL;

  const launch = () =>
    new Promise<void>((resolve) => {
      const started = Date.now();
      const proc = fork(entry, [], {
        env: { ...process.env, BIMS_SIDECAR_TOKEN: token },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      child = proc;
      const timer = setTimeout(() => {
        log.warn('the sidecar did not report ready within 20 s; the media gateway answers 503 meanwhile');
        resolve();
      }, 20_000);
      proc.on('message', (message: { type?: string; url?: string }) => {
        if (message?.type !== 'ready') return;
        url ??= message.url;
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
        log.error('the sidecar exited; starting it again', { code, signal, inMs: delay });
        setTimeout(() => void (stopping ? undefined : launch()), delay).unref();
        delay = Math.min(delay * 2, 30_000);
      });
    });

  await launch();
  return {
    config: { ...config, BIMS_SIDECAR_TOKEN: token, BIMS_SIDECAR_URL: url ?? `http://127.0.0.1:${config.BIMS_SIDECAR_PORT}` },
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
