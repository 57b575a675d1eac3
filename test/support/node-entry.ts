import { join } from 'node:path';
import { testSettings } from './test-settings.js';

const root = join(import.meta.dirname, '..', '..');

/**
 * The `node` arguments that run one of BIMS's entries, named by its source (`src/runtime/node.ts`), in `cwd`.
 * When `npm test` built dist/ for this run (BIMS_TEST_BUILD=dist), the compiled module: a service process then
 * costs about a third of the CPU until it listens (no TypeScript to transform; 0.74-1.03 against 1.8-2.1 CPU-s).
 * Otherwise, and for another checkout (a bench's baseline), the source with tsx as a loader, so that a dist/ older
 * than the sources is never run. The loader runs inside the one process rather than through tsx's CLI, which would
 * run the entry in a child of its own: a SIGKILL of the CLI cannot be relayed and would leave the entry running.
 */
export function entryArgs(source: string, cwd: string = root): string[] {
  if (cwd === root && testSettings().BIMS_TEST_BUILD === 'dist') return [join('dist', source.replace(/\.ts$/, '.js'))];
  return ['--import', 'tsx', source];
}
