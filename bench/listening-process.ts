import { spawn } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');

/** A server process this checkout runs under tsx. */
export interface ListeningProcess {
  url: string;
  pid: number;
  stop: () => void;
}

/**
 * Start `node --import tsx ...args` from the checkout's root and wait for the line `listening <url>` it prints
 * when ready (bench/hello-server.ts and the pglite-worker bench's servers); rejects if it exits first.
 */
export async function startListening(args: string[]): Promise<ListeningProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = out.match(/listening (\S+)/);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code})`)));
  });
  return { url, pid: child.pid!, stop: () => child.kill('SIGTERM') };
}
