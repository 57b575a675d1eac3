import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const run = promisify(execFile);

/**
 * `npm test` runs no typecheck, so this runs the compiler over handler-typing.ts: each `@ts-expect-error`
 * there marks a wrong field name, and the compile fails if any of them stops being an error (the inference
 * of handler input from the operation's schemas decayed to `any`).
 * It compiles most of src: minutes on a loaded 2-core machine, hence the budget.
 */
it('a handler that names a field its schemas do not have fails to compile', async () => {
  const result = await run(process.execPath, [
    'node_modules/typescript/bin/tsc',
    '--noEmit',
    '-p',
    'test/types/tsconfig.json',
  ]).then(
    () => ({ code: 0, out: '' }),
    (error: { code?: number; stdout?: string }) => ({ code: error.code ?? 1, out: error.stdout ?? '' }),
  );
  expect(result.out).toBe('');
  expect(result.code).toBe(0);
}, 300_000);
