import { fork, type ChildProcess } from 'node:child_process';
import type { Logger } from '../logger.js';

/** A child process `npm start` runs beside the API (the sidecar, the dashboard), started again when it dies. */
interface SupervisedChild {
  stop(): Promise<void>;
}

interface SupervisedChildOptions {
  /** Named in log lines ("the sidecar exited ..."). */
  name: string;
  /** The entry module to fork. */
  entry: string;
  /** Node flags of the child. */
  execArgv?: string[];
  /** The environment of each start (a restart may pass what the first start learned, e.g. its port). */
  env: () => NodeJS.ProcessEnv;
  /** What still works while the child is not ready, for the log line (e.g. "the media gateway answers 503"). */
  meanwhile: string;
  /** The child's `{type: 'ready', url}` message, on every (re)start. */
  onReady: (url: string | undefined) => void;
  log: Logger;
}

/**
 * Fork `entry` and resolve once it reports ready (or after 20 s, so the API starts anyway and answers for the
 * missing component meanwhile). A child that dies (any exit but a clean 0) is started again with a growing delay, reset after a minute
 * of good health; `stop()` asks it to finish (SIGTERM, SIGKILL after 8 s) and stops restarting it.
 */
export async function superviseChild(options: SupervisedChildOptions): Promise<SupervisedChild> {
  const { name, log } = options;
  let child: ChildProcess | null = null;
  let stopping = false;
  let delay = 1000;

  const launch = () =>
    new Promise<void>((resolve) => {
      const started = Date.now();
      const proc = fork(options.entry, [], {
        execArgv: options.execArgv ?? process.execArgv,
        env: options.env(),
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      child = proc;
      const timer = setTimeout(() => {
        log.warn(`the ${name} did not report ready within 20 s; ${options.meanwhile} meanwhile`);
        resolve();
      }, 20_000);
      proc.on('message', (message: { type?: string; url?: string }) => {
        if (message?.type !== 'ready') return;
        options.onReady(message.url);
        clearTimeout(timer);
        delay = 1000;
        resolve();
      });
      proc.on('exit', (code, signal) => {
        clearTimeout(timer);
        resolve();
        if (stopping || child !== proc) return;
        child = null;
        // Exit code 0 is a requested stop, not a crash: a terminal's Ctrl-C or a service manager signals the
        // whole process group, so the child may finish before this process has called stop().
        if (code === 0) {
          log.info(`the ${name} stopped`);
          return;
        }
        if (Date.now() - started > 60_000) delay = 1000;
        log.error(`the ${name} exited; starting it again`, { code, signal, inMs: delay });
        setTimeout(() => void (stopping ? undefined : launch()), delay).unref();
        delay = Math.min(delay * 2, 30_000);
      });
    });

  await launch();
  return {
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
