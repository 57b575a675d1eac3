// The one extraction service `npm test` starts for a whole run (scripts/test.mjs): the real `bims extraction-service`
// entry from the run's build of dist/, two workers, a random token. The service processes of the suites whose subject
// is not the extraction pool delegate to it (test/support/shared-extraction.ts) instead of warming a pool each.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** CPU seconds of a live process and its threads (the pool's workers are threads), from /proc; 0 elsewhere. */
function cpuSecondsOf(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/**
 * Start the service in `root` and resolve once it listens: `{ url, token, stop }`, where `stop()` ends it and resolves
 * with its CPU and wall seconds. Its output goes to a file, not a pipe: `npm test` waits for vitest synchronously,
 * and a pipe nobody drains would stop the service at its first full buffer. It holds an IPC channel to this process,
 * so it stops by itself when this process dies without stopping it (src/runtime/node-extraction.ts).
 */
export async function startTestExtractionService(root, { startupMs = 120_000 } = {}) {
  const token = randomBytes(24).toString('hex');
  const logFile = join(tmpdir(), `bims-test-extraction-${process.pid}.log`);
  const out = openSync(logFile, 'w');
  const started = performance.now();
  const child = spawn(process.execPath, [join('dist', 'src', 'runtime', 'node-extraction.js')], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME ?? '/tmp',
      BIMS_EXTRACTION_TOKEN: token,
      BIMS_EXTRACTION_HOST: '127.0.0.1',
      BIMS_EXTRACTION_PORT: '0',
      BIMS_EXTRACTION_WORKERS: '2',
      // Its callers are the suites' nodes on unrelated databases, whose account ids coincide (every suite's admin is
      // account 1): one owner's share of the queue would be every suite's; the whole queue is theirs instead.
      BIMS_EXTRACTION_QUEUE_PER_ACCOUNT: '64',
    },
    stdio: ['ignore', out, out, 'ipc'],
  });
  closeSync(out);
  const output = () => readFileSync(logFile, 'utf8');
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
  let gone = null;
  void exited.then((status) => (gone = status));

  const until = Date.now() + startupMs;
  let url;
  while (!url) {
    url = output().match(/"message":"extraction service listening","url":"([^"]+)"/)?.[1];
    if (url) break;
    if (gone !== null || Date.now() > until) {
      if (gone === null) child.kill('SIGKILL');
      throw new Error(
        `the extraction service for the run ${gone === null ? `did not listen within ${startupMs} ms` : `exited (${gone})`}:\n${output().slice(-2000)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  const stop = async () => {
    const cpuSeconds = cpuSecondsOf(child.pid);
    const wallSeconds = (performance.now() - started) / 1000;
    if (gone !== null) console.error(`[test] the extraction service had exited (${gone}):\n${output().slice(-2000)}`);
    else child.kill('SIGTERM');
    await exited;
    rmSync(logFile, { force: true });
    return { cpuSeconds, wallSeconds };
  };
  return { url, token, stop };
}
