import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { bootForTest } from '../support/databases.js';

const run = promisify(execFile);
const documents = { admin: '/admin/openapi.json', root: '/openapi.json', user: '/user/openapi.json' } as const;

/**
 * The documents as an integrator's tooling sees them: Redocly's recommended rules (redocly.yaml at the
 * repository root says which rule is off and why) find no error in any of the three.
 */
describe('Redocly lint', () => {
  it('finds no error in the three surface documents', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bims-openapi-'));
    const booted = await bootForTest('pglite');
    try {
      const files: string[] = [];
      for (const [surface, path] of Object.entries(documents)) {
        const res = await booted.app.request(path);
        expect(res.status).toBe(200);
        const file = join(dir, `${surface}.json`);
        await writeFile(file, await res.text());
        files.push(file);
      }
      const cli = resolve('node_modules/@redocly/cli/bin/cli.js');
      const { stdout, stderr } = await run(
        process.execPath,
        [cli, 'lint', ...files, '--config', resolve('redocly.yaml'), '--format=summary'],
        {
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
        },
      ).catch((error: { stdout?: string; stderr?: string }) => {
        throw new Error(`redocly lint found errors:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
      });
      expect(`${stdout}${stderr}`).not.toMatch(/\berror\b/i);
    } finally {
      await booted.close();
      await rm(dir, { recursive: true, force: true });
    }
    // Three Redocly runs of a few seconds each alone; on a loaded 2-core machine, a minute or more.
  }, 180_000);
});
