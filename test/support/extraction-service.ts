import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { entryArgs } from './node-entry.js';

const root = join(import.meta.dirname, '..', '..');

/**
 * Start the real extraction service (`bims extraction-service`, src/runtime/node-extraction.ts) with one
 * worker on a free port, compiled or from the sources (test/support/node-entry.ts); resolves once it listens.
 */
export function startExtractionService(
  token: string,
): Promise<{ url: string; child: ChildProcess; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, entryArgs('src/runtime/node-extraction.ts'), {
    cwd: root,
    env: {
      PATH: process.env.PATH!,
      HOME: process.env.HOME ?? '/tmp',
      BIMS_EXTRACTION_TOKEN: token,
      BIMS_EXTRACTION_PORT: '0',
      BIMS_EXTRACTION_WORKERS: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const stop = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    return exited;
  };
  return new Promise((resolve, reject) => {
    const seen = (d: Buffer) => {
      output += d;
      const listening = output.match(/"message":"extraction service listening","url":"([^"]+)"/);
      if (listening) resolve({ url: listening[1]!, child, stop });
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    void exited.then((code) => reject(new Error(`the extraction service exited with ${code}:\n${output}`)));
  });
}
