// BIMS under Deno, from `npm test`: runs `deno task test` (test/runtime/deno/smoke.deno.ts), which starts the
// Deno entry as `deno task start` does, on PGlite and on a fresh PostgreSQL database, and runs the runtime
// smoke suite (auth, accounts, enrol, verify, identify, OpenAPI) against each, all inside Deno. The deno binary
// is the pinned `deno` package of tools/deno (installed on first use by scripts/tool.mjs, not by the root
// install); its cache lives in .cache/deno (deno.json's tasks set DENO_DIR).
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freshPostgres } from '../support/databases.js';

const root = join(import.meta.dirname, '..', '..');
const deno = execFileSync(process.execPath, [join(root, 'scripts', 'tool.mjs'), 'deno', 'deno/deno'], {
  encoding: 'utf8',
}).trim();

function run(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(deno, args, {
      cwd: root,
      env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

describe('BIMS on Deno', () => {
  it('passes the smoke suite on PGlite and PostgreSQL (deno task test)', async () => {
    const env: Record<string, string> = {};
    if (process.env.DATABASE_URL) {
      const fresh = await freshPostgres();
      cleanups.push(fresh.drop);
      env.DATABASE_URL = fresh.url;
    }
    const { code, output } = await run(['task', 'test'], env);
    expect(output).toMatch(/BIMS on Deno over pglite: smoke suite \.\.\. ok/);
    if (env.DATABASE_URL) expect(output).toMatch(/BIMS on Deno over postgres: smoke suite \.\.\. ok/);
    expect(code, output).toBe(0);
  }, 300_000);
});
