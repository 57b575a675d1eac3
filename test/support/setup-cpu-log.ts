import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { testSettings } from './test-settings.js';

// A setup file (vitest.config.ts): with BIMS_TEST_CPU_LOG set, each test file appends one JSON line there with
// the CPU seconds it cost its worker process, its threads and the child processes it started and waited for
// (services, Chromium, CLIs), when it started (epoch seconds) and in which worker (pid), so that a run's timeline
// can be laid out: which files ran beside which, and which one ran alone at the end (`npm run test:cpu`). The machine's other load stretches wall time but hardly CPU time, so this is the
// measure to compare two runs by on a shared machine (`npm run test:cpu -- FILE` sums it per project).
// PostgreSQL's own server processes are not children of the suite and are not counted.

const log = testSettings().BIMS_TEST_CPU_LOG;

/** CPU seconds of this process and its waited-for children, from /proc (Linux), or process.cpuUsage elsewhere. */
function cpuSeconds(): number {
  try {
    // Fields after the command's closing parenthesis: utime, stime, cutime, cstime are the 12th to 15th.
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / 100;
  } catch {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1e6;
  }
}

if (log) {
  let cpuAtStart = 0;
  let wallAtStart = 0;
  let startedAt = 0;
  beforeAll(() => {
    cpuAtStart = cpuSeconds();
    wallAtStart = performance.now();
    startedAt = Date.now() / 1000;
  });
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a hook's first parameter as fixtures, which must be a pattern.
  afterAll(({}, suite) => {
    const file = suite as { filepath?: string; projectName?: string };
    appendFileSync(
      log,
      `${JSON.stringify({
        project: file.projectName ?? '',
        file: file.filepath ?? '',
        cpuSeconds: Math.round((cpuSeconds() - cpuAtStart) * 100) / 100,
        wallSeconds: Math.round(performance.now() - wallAtStart) / 1000,
        startedAt: Math.round(startedAt * 1000) / 1000,
        pid: process.pid,
      })}\n`,
    );
  });
}
