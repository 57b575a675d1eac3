import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { entryArgs } from './node-entry.js';

const root = join(import.meta.dirname, '..', '..');

/** A real BIMS process (src/runtime/node.ts, or its build when `npm test` made one, as `npm start` runs it) and what it printed. */
export interface ServiceProcess {
  child: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  output(): string;
  /** Resolves with the base URL once the process logs that it listens; rejects if it exits first. */
  listening: Promise<string>;
}

/**
 * Start the Node entry without the sidecar (it would only contend for its fixed ports) on an ephemeral
 * loopback port (PORT 0: the `listening` line names the port the kernel chose). `env` adds to or overrides
 * a minimal environment, so nothing of the caller's environment (DATABASE_URL ...) leaks in unasked.
 * Compiled or from the sources: test/support/node-entry.ts.
 */
export function startService(
  env: Record<string, string>,
  options: { startupMs?: number /** another checkout to run (a bench's baseline) */; root?: string } = {},
): ServiceProcess {
  const cwd = options.root ?? root;
  const child = spawn(process.execPath, entryArgs('src/runtime/node.ts', cwd), {
    cwd,
    env: {
      PATH: process.env.PATH!,
      HOME: process.env.HOME ?? '/tmp',
      BIMS_SIDECAR: 'off',
      PORT: '0',
      HOST: '127.0.0.1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    const look = (chunk: Buffer) => {
      output += chunk;
      const url = output.match(/"message":"listening","url":"([^"]+)"/)?.[1];
      if (url) resolve(url);
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', look);
    void exited.then((code) =>
      reject(new Error(`the service exited (${code}) before listening:\n${output.slice(-2000)}`)),
    );
    const timer = setTimeout(
      () =>
        reject(
          new Error(`the service did not listen within ${options.startupMs ?? 60_000} ms:\n${output.slice(-2000)}`),
        ),
      options.startupMs ?? 60_000,
    );
    timer.unref();
  });
  listening.catch(() => {}); // observed by whoever awaits it; do not crash the runner meanwhile
  return { child, exited, output: () => output, listening };
}

/**
 * JSON requests to a service process with one set of credentials: `call(url, method, path, body?)` answers
 * the status and the parsed JSON body.
 */
export function serviceCaller(authorization: string) {
  return async (url: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };
}
