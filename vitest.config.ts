import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'workers/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Suites share one PostgreSQL server; each suite makes its own database, so files may run in parallel.
    pool: 'forks',
  },
});
