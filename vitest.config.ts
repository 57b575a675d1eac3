import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'workers/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Suites share one PostgreSQL server; each suite makes its own database, so files may run in parallel.
    pool: 'forks',
    // Vitest's default is one fork fewer than the cores, i.e. one file at a time on a 2-core CI machine; most
    // suites spend their time waiting on servers, PostgreSQL, Chromium and Janus, so two at a time keeps the
    // cores busy (suites with a bound in seconds run alone afterwards: scripts/test.mjs).
    maxWorkers: 2,
  },
});
