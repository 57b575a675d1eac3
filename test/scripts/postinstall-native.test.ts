// `npm install` in a checkout also installs the native extraction backend (onnxruntime-node in tools/bench, through
// scripts/tool.mjs), so that `npm start` runs BIMS_EXTRACTION_BACKEND=auto on it; a failed install (no registry)
// does not fail `npm install` and says what to run; BIMS_SKIP_NATIVE=1 skips it. The real postinstall runs in a
// temporary folder standing for a checkout (its scripts and tools/bench copied), with the models skipped.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveOrtNode } from '../../src/extraction/node-native-runner.js';

const repo = join(import.meta.dirname, '..', '..');
const root = mkdtempSync(join(tmpdir(), 'bims-postinstall-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A folder with what postinstall runs in a checkout: scripts/ (postinstall, tool, machine-cache) and tools/bench. */
function checkout(name: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'scripts'), { recursive: true });
  mkdirSync(join(dir, 'tools', 'bench'), { recursive: true });
  for (const file of ['postinstall.mjs', 'tool.mjs', 'machine-cache.mjs'])
    copyFileSync(join(repo, 'scripts', file), join(dir, 'scripts', file));
  for (const file of ['package.json', 'package-lock.json'])
    copyFileSync(join(repo, 'tools', 'bench', file), join(dir, 'tools', 'bench', file));
  return dir;
}

function postinstall(dir: string, env: Record<string, string>) {
  const run = spawnSync(process.execPath, [join(dir, 'scripts', 'postinstall.mjs')], {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', BIMS_SKIP_MODELS: '1', ...env },
    timeout: 300_000,
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('postinstall: the native extraction backend', () => {
  it('installs onnxruntime-node in tools/bench (from the machine store when it holds this lock)', () => {
    // The machine's store, as `npm install` in this checkout filled it: the lock is the same, so no download here.
    execFileSync(process.execPath, [join(repo, 'scripts', 'tool.mjs'), 'bench'], { stdio: 'ignore' });
    const dir = checkout('installed');
    const { status } = postinstall(dir, {});
    expect(status).toBe(0);
    expect(resolveOrtNode(join(dir, 'tools', 'bench'), join(root, 'nowhere', 'bims.js'))).toMatch(/onnxruntime-node/);
  }, 300_000);

  it('a failed install (no registry) leaves `npm install` passing and says what to run', () => {
    const dir = checkout('offline');
    const { status, output } = postinstall(dir, {
      BIMS_TOOLS_STORE: join(root, 'empty-store'),
      npm_config_cache: join(root, 'empty-npm-cache'),
      npm_config_registry: 'http://127.0.0.1:9/',
      npm_config_fetch_retries: '0',
    });
    expect(status).toBe(0);
    expect(output).toContain(
      'postinstall: the native extraction backend (onnxruntime-node) is NOT installed; faces run on wasm, at about twice the CPU. `npm run native-backend` retries (docs/extraction.md)',
    );
    expect(resolveOrtNode(join(dir, 'tools', 'bench'), join(root, 'nowhere', 'bims.js'))).toBeUndefined();
  }, 300_000);

  it('BIMS_SKIP_NATIVE=1 skips it and says so', () => {
    const dir = checkout('skipped');
    const { status, output } = postinstall(dir, { BIMS_SKIP_NATIVE: '1', BIMS_TOOLS_STORE: join(root, 'unused') });
    expect(status).toBe(0);
    expect(output).toContain('postinstall: BIMS_SKIP_NATIVE=1, not installing the native extraction backend');
    expect(existsSync(join(root, 'unused'))).toBe(false);
  });
});
