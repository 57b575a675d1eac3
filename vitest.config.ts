import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/support/longest-first-sequencer.js';
import { testSettings } from './test/support/test-settings.js';

/** Tests beside the code that need no external program (PGlite in process is fine): `npm run test:unit`. */
const NEEDS_INSTALLED_PROGRAMS = ['src/sidecar/janus-config.test.ts', 'src/sidecar/decoders/rtp-decoder.test.ts'];

/** Builds and runs the speaker encoder from checkpoints: minutes of CPU, so with the engine suites. */
const CONVERTS_MODELS = ['test/scripts/voice-model.test.ts', 'test/scripts/voice-model-download.test.ts'];

/**
 * Suites whose assertions include a bound in seconds that the issue they test sets (e.g. "no IDENTIFY held past
 * 5 s"): they run last, one file at a time, so that a neighbour suite's load cannot fail them (project
 * runtime-alone, the last group).
 */
const ALONE = ['test/runtime/extraction-admission.test.ts'];

/** Files at once in the main group (every project but runtime-alone); BIMS_TEST_WORKERS to compare. */
const WORKERS = testSettings().BIMS_TEST_WORKERS ?? 3;

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Suites share one PostgreSQL server; each suite makes its own database, so files may run in parallel.
    pool: 'forks',
    // One fork runs file after file of its project without a fresh module graph: the imports and the warm JIT
    // are paid once per fork, not once per file. The suite is CPU-bound on 2 cores, so less CPU is less time:
    // `--project http --maxWorkers=2` in one session took 398 s wall and 755 CPU-s isolated, 291-302 s and
    // 535-566 CPU-s not (0.73-0.76 of each); unit 48 -> 31 s, 91 -> 59 CPU-s. Every project passes
    // this way, twice, on PGlite and PostgreSQL. Vitest hands a fork the next file only if it is of the same
    // project. A file must leave no process-wide state behind; what it cannot undo itself the setup file does.
    isolate: false,
    // Node's Request and Response back after each file: a server started in process replaces them (fetch-globals.ts);
    // with BIMS_TEST_CPU_LOG, each file's CPU seconds logged (setup-cpu-log.ts).
    setupFiles: ['test/support/setup-fetch-globals.ts', 'test/support/setup-cpu-log.ts'],
    // Vitest's default is one fork fewer than the cores, i.e. one file at a time on a 2-core CI machine. The projects
    // run in groups (sequence.groupOrder), one group after the other, each with its number of files at once; a group
    // ends with the tail of its last long file, and the next one waits for it. So every project but one is in one
    // group, three files at a time: the browser and runtime suites wait on the processes they start (Chromium,
    // Janus), the HTTP suites on PostgreSQL, the service processes and the shared extraction service (two at a time
    // they used 1.2 of the 2 cores), and a worker that is done with one project takes the next project's file while
    // the others still run theirs, so the CPU-bound engine and unit files fill the cores where a project ends. The
    // suites with a bound in seconds run after it, alone.
    maxWorkers: WORKERS,
    // The longest suites first, a project's files together (a worker reuses its modules within a project only):
    // test/support/longest-first-sequencer.ts.
    sequence: { sequencer: LongestFirstSequencer },
    // Named projects, so a part of the suite can be run alone (`npx vitest run --project http`). `npm test`
    // runs them all. The HTTP and runtime suites also run over PostgreSQL when DATABASE_URL is set.
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          sequence: { groupOrder: 0 },
          include: [
            'src/**/*.test.ts',
            'workers/**/*.test.ts',
            'test/scripts/**/*.test.ts',
            'test/support/**/*.test.ts',
          ],
          exclude: [...NEEDS_INSTALLED_PROGRAMS, ...CONVERTS_MODELS],
        },
      },
      {
        extends: true,
        test: {
          name: 'http',
          sequence: { groupOrder: 0 },
          include: [
            'test/http/**/*.test.ts',
            'test/security/**/*.test.ts',
            'test/db/**/*.test.ts',
            'test/types/**/*.test.ts',
          ],
        },
      },
      {
        extends: true,
        test: {
          name: 'engine',
          sequence: { groupOrder: 0 },
          include: [
            'test/biometrics/**/*.test.ts',
            'test/voice/**/*.test.ts',
            'test/bench/**/*.test.ts',
            ...CONVERTS_MODELS,
          ],
        },
      },
      {
        extends: true,
        test: {
          name: 'runtime',
          sequence: { groupOrder: 0 },
          include: ['test/{runtime,cluster}/**/*.test.ts', 'test/gateway/**/*.test.ts', ...NEEDS_INSTALLED_PROGRAMS],
          exclude: ALONE,
        },
      },
      {
        extends: true,
        test: {
          name: 'browser',
          sequence: { groupOrder: 0 },
          include: ['test/browser/**/*.test.ts'],
        },
      },
      // One file at a time after every other group (no --project runtime: `--project runtime-alone` runs them).
      {
        extends: true,
        test: { name: 'runtime-alone', sequence: { groupOrder: 1 }, maxWorkers: 1, include: ALONE },
      },
    ],
  },
});
