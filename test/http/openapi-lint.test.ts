import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { bootForTest } from '../support/databases.js';
import { toolPath } from '../../scripts/tool.mjs';

const run = promisify(execFile);
const documents = { admin: '/admin/openapi.json', root: '/openapi.json', user: '/user/openapi.json' } as const;

/** The three published documents written to files, for the linters; `done` removes them. */
async function writeDocuments() {
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
    return { files, done: () => rm(dir, { recursive: true, force: true }) };
  } finally {
    await booted.close();
  }
}

/**
 * The documents as an integrator's tooling sees them: Redocly's recommended rules (redocly.yaml at the
 * repository root says which rule is off and why) find no error in any of the three.
 */
describe('Redocly lint', () => {
  it('finds no error in the three surface documents', async () => {
    const { files, done } = await writeDocuments();
    try {
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
      await done();
    }
    // Three Redocly runs of a few seconds each alone; on a loaded 2-core machine, a minute or more.
  }, 180_000);
});

interface SpectralFinding {
  code: string;
  message: string;
  path: string[];
  severity: number;
  source: string;
}

/**
 * Spectral's spectral:oas rules (.spectral.yaml at the repository root turns off the trailing-slash rule, as
 * redocly.yaml does, and says why): no error and no warning in any of the three documents. Spectral lives in
 * tools/spectral (scripts/tool.mjs installs it on first use), not in the root install.
 */
describe('Spectral lint', () => {
  it('finds no error and no warning in the three surface documents', async () => {
    const cli = toolPath('spectral', '@stoplight/spectral-cli/dist/index.js');
    const { files, done } = await writeDocuments();
    try {
      // One run over the three (Spectral's start-up is most of a run); it exits 1 when it finds anything at or
      // above --fail-severity, with the findings on stdout either way.
      const { stdout } = await run(
        process.execPath,
        [cli, 'lint', ...files, '--ruleset', resolve('.spectral.yaml'), '--format', 'json', '--quiet'],
        { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } },
      ).catch((error: { stdout?: string; stderr?: string }) => {
        if (!error.stdout?.trim().startsWith('[')) throw new Error(`spectral failed:\n${error.stderr ?? ''}`);
        return { stdout: error.stdout };
      });
      const findings = (JSON.parse(stdout) as SpectralFinding[]).filter((f) => f.severity <= 1);
      expect(
        findings.map(
          (f) => `${f.source}: ${['error', 'warning'][f.severity]} ${f.code} at ${f.path.join('.')}: ${f.message}`,
        ),
      ).toEqual([]);
    } finally {
      await done();
    }
    // Spectral's first run installs tools/spectral (npm ci, about 40 s here); its lint of the three about 15 s alone.
  }, 300_000);
});
