// The npm package: `npm run build`, then `npm pack`, then the packed files alone (unpacked in a temporary
// folder, with the repository's node_modules standing in for the installed dependencies and its fetched models
// for what the package's postinstall would fetch) must give a working `bims` command: help, migrate, and
// serve with face extraction on the compiled worker threads. The build runs on a copy of the sources, so the
// repository's own dist/ (served by the browser SDK test meanwhile) is left alone.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverPort } from '../support/ports.js';

const root = join(import.meta.dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'bims-package-'));
const unpacked = join(work, 'package');
let files: string[] = [];
let bin = '';

/** Models are large and never published: link them instead of copying. */
function linkModels(into: string) {
  mkdirSync(into, { recursive: true });
  for (const model of readdirSync(join(root, 'wasm', 'models')).filter((f) => f.endsWith('.onnx'))) {
    symlinkSync(join(root, 'wasm', 'models', model), join(into, model));
  }
}

beforeAll(() => {
  const tree = join(work, 'tree');
  for (const entry of [
    'package.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'README.md',
    'src',
    'workers',
    'scripts',
    'docs',
  ]) {
    cpSync(join(root, entry), join(tree, entry), { recursive: true });
  }
  linkModels(join(tree, 'wasm', 'models'));
  for (const json of readdirSync(join(root, 'wasm', 'models')).filter((f) => f.endsWith('.json'))) {
    copyFileSync(join(root, 'wasm', 'models', json), join(tree, 'wasm', 'models', json));
  }
  symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'));
  execFileSync(process.execPath, [join(tree, 'scripts', 'build.mjs')], {
    cwd: tree,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
      cwd: tree,
      encoding: 'utf8',
    }),
  );
  files = packed.files.map((f: { path: string }) => f.path);
  execFileSync('tar', ['-xzf', join(work, packed.filename), '-C', work]);
  symlinkSync(join(root, 'node_modules'), join(unpacked, 'node_modules'));
  linkModels(join(unpacked, 'wasm', 'models'));
  bin = join(unpacked, JSON.parse(readFileSync(join(unpacked, 'package.json'), 'utf8')).bin.bims);
}, 300_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

const env = (extra: Record<string, string>) => ({
  PATH: process.env.PATH!,
  HOME: process.env.HOME ?? '/tmp',
  ...extra,
});

describe('the npm package', () => {
  it('holds compiled code with declarations, the bims command, the worker entry and the browser SDK, and no sources or tests', () => {
    for (const f of [
      'package.json',
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'dist/src/runtime/cli.js',
      'dist/workers/face.worker.js',
      'dist/sdk/bims-face-sdk.js',
      'dist/sdk/bims-capture.js',
      'dist/sdk/ort-wasm-simd-threaded.wasm',
      'dist/wasm/models/manifest.json',
      'scripts/postinstall.mjs',
      'scripts/fetch-models.mjs',
      'wasm/models/manifest.json',
      // The voice model's install step and the converter it runs when it downloads the checkpoint.
      'scripts/fetch-voice-model.mjs',
      'dist/scripts/voice-model.js',
      'wasm/models/voice-manifest.json',
    ]) {
      expect(files).toContain(f);
    }
    expect(files.filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
    expect(files.filter((f) => /\.test\.|^test\/|^dist\/cloudflare/.test(f))).toEqual([]);
    expect(files.filter((f) => f.endsWith('.onnx') && !f.startsWith('dist/sdk/'))).toEqual([]);
  });

  it("the voice model's install step runs the compiled converter: offline it says what to do and installs nothing", async () => {
    const modelsDir = mkdtempSync(join(work, 'voice-models-'));
    const url = `http://127.0.0.1:${await serverPort()}/pretrained.pt`; // nothing listens there
    let run: { status?: number; stdout?: string; stderr?: string } = {};
    try {
      execFileSync(
        process.execPath,
        ['scripts/fetch-voice-model.mjs', '--models-dir', modelsDir, '--shared-dir', join(work, 'none'), '--url', url],
        { cwd: unpacked, encoding: 'utf8', env: env({}), stdio: 'pipe' },
      );
    } catch (error) {
      run = error as typeof run;
    }
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`voice-model: cannot reach ${url} (ECONNREFUSED)`);
    expect(run.stderr).toContain('resemblyzer_ge2e_fp16w.onnx is NOT installed');
    expect(readdirSync(modelsDir)).toEqual([]);
  });

  it('bims --help lists the commands; an unknown command is refused', () => {
    const help = execFileSync(process.execPath, [bin, '--help'], { encoding: 'utf8', env: env({}) });
    for (const command of ['serve', 'migrate', 'eval', 'reextract', 'licence', 'extraction-service'])
      expect(help).toMatch(new RegExp(`^  ${command} `, 'm'));
    let refused: { status?: number; stderr?: string } = {};
    try {
      execFileSync(process.execPath, [bin, 'frobnicate'], { encoding: 'utf8', env: env({}), stdio: 'pipe' });
    } catch (error) {
      refused = error as typeof refused;
    }
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/unknown command 'frobnicate'/);
  });

  it('bims migrate prepares a PGlite database, and bims serve then enrols a face on the compiled worker pool (wasm: no tools/ in a package) and serves the camera page', async () => {
    const dataDir = join(work, 'data');
    const migrated = execFileSync(process.execPath, [bin, 'migrate'], {
      encoding: 'utf8',
      env: env({ BIMS_DATA_DIR: dataDir }),
    });
    expect(migrated).toMatch(/^applied: 2026_11_25_0001_initial/);

    const port = await serverPort();
    const child = spawn(process.execPath, [bin, 'serve'], {
      env: env({
        PORT: port,
        BIMS_DATA_DIR: dataDir,
        BIMS_SIDECAR: 'off',
        BIMS_DASHBOARD_PORT: '0',
        BIMS_EXTRACTION_WORKERS: '1',
        BIMS_ADMIN_PASSWORD: 'package-admin-password',
        BIMS_PASSWORD_ITERATIONS: '10000',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', () => /"message":"listening"/.test(output) && resolve());
        void exited.then((code) => reject(new Error(`bims serve exited with ${code}:\n${output}`)));
      });
      const base = `http://127.0.0.1:${port}`;
      expect(output).not.toMatch(/migrations applied/); // bims migrate did it
      expect((await fetch(`${base}/ready`)).status).toBe(200);
      const image = readFileSync(join(root, 'test', 'fixtures', 'photos', 'labelled', 'cage', 'cage.jpg')).toString(
        'base64',
      );
      const res = await fetch(`${base}/admin/subjects/create`, {
        method: 'POST',
        headers: { authorization: `Basic ${btoa('admin:package-admin-password')}`, 'content-type': 'application/json' },
        body: JSON.stringify({ subjectId: 'packaged', faces: [{ image }] }),
      });
      const body = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(201);
      expect(body.status).toBe('ENROLLED');
      // The dashboard child runs from the package too, with the camera page's helper bundled from the compiled SDK.
      const camera = await fetch(`${base}/dashboard/capture.html`);
      expect(camera.status).toBe(200);
      expect(camera.headers.get('permissions-policy')).toBe('camera=(self), microphone=(self), geolocation=()');
      const helper = await fetch(`${base}/dashboard/js/bims-capture.js`);
      expect(helper.status).toBe(200);
      const module = await import(
        `data:text/javascript;base64,${Buffer.from(await helper.arrayBuffer()).toString('base64')}`
      );
      expect(typeof module.captureWithGateway).toBe('function');
      // An application's install has no tools/: `auto` runs wasm and the summary names npm's install of the native one.
      const until = Date.now() + 60_000;
      while (!/^ {2}faces /m.test(output) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      expect(output).toContain(
        '  faces      on: wasm backend: onnxruntime-node is not installed (`npm install onnxruntime-node --ignore-scripts` installs it: about half the CPU per face)',
      );
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 180_000);
});
