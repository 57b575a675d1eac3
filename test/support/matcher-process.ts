import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { entryArgs } from './node-entry.js';

const root = join(import.meta.dirname, '..', '..');

/** A real `bims matcher` process (src/runtime/commands/matcher.ts, as `npm run matcher` runs it). */
export interface MatcherProcess {
  child: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  output(): string;
  /** Resolves with the 'matcher ready' log line's fields once its shards are loaded and offered on NATS. */
  ready: Promise<Record<string, unknown>>;
}

/**
 * Start a matcher process holding `shards` (`--shards`). `env` adds to a minimal environment (DATABASE_URL,
 * BIMS_NATS_URL, BIMS_MATCHER_SHARDS ...). One process, compiled or from the sources (test/support/node-entry.ts),
 * so a SIGKILL kills the matcher itself (as a crash would), not a wrapper.
 */
export function startMatcher(
  shards: number[],
  env: Record<string, string>,
  options: { startupMs?: number } = {},
): MatcherProcess {
  const child = spawn(
    process.execPath,
    [...entryArgs('src/runtime/commands/matcher.ts'), '--shards', shards.join(',')],
    {
      cwd: root,
      env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', BIMS_LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const ready = new Promise<Record<string, unknown>>((resolve, reject) => {
    const look = (chunk: Buffer) => {
      output += chunk;
      const line = output.split('\n').find((l) => l.includes('"message":"matcher ready"'));
      if (line) resolve(JSON.parse(line) as Record<string, unknown>);
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', look);
    void exited.then((code) =>
      reject(new Error(`the matcher exited (${code}) before it was ready:\n${output.slice(-2000)}`)),
    );
    const timer = setTimeout(
      () =>
        reject(
          new Error(`the matcher was not ready within ${options.startupMs ?? 60_000} ms:\n${output.slice(-2000)}`),
        ),
      options.startupMs ?? 60_000,
    );
    timer.unref();
  });
  ready.catch(() => {});
  return { child, exited, output: () => output, ready };
}

/** SIGKILL a process (a crash) and wait for it to be gone. */
export async function killHard(p: { child: ChildProcess; exited: Promise<number | null> }): Promise<void> {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await p.exited;
}
