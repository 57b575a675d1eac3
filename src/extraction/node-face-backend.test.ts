// BIMS_EXTRACTION_BACKEND on Node: `auto` takes onnxruntime-node where it is installed and loads, else wasm with
// the reason; an explicit `native` that cannot be had stops start-up with one line. The places searched are
// folders made here: one with no onnxruntime-node, one with a package of that name whose loading fails or works.
// (test/biometrics/native-backend.test.ts runs the real onnxruntime-node.)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseFaceBackend } from './node-face-backend.js';

const root = mkdtempSync(join(tmpdir(), 'bims-face-backend-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A folder standing for tools/bench, with onnxruntime-node's entry when `entry` is given. */
function toolsDir(name: string, entry?: string): { toolsDir: string; besideBims: string } {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{"private":true}');
  if (entry !== undefined) {
    const pkg = join(dir, 'node_modules', 'onnxruntime-node');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, 'package.json'), '{"name":"onnxruntime-node","main":"index.js"}');
    writeFileSync(join(pkg, 'index.js'), entry);
  }
  // Nothing beside a "bims" in an empty folder either.
  return { toolsDir: dir, besideBims: join(root, 'nowhere', 'bims.js') };
}

describe('chooseFaceBackend', () => {
  const missing = toolsDir('missing');
  const broken = toolsDir('broken', "throw new Error('libonnxruntime.so.1: cannot open shared object file');");
  const working = toolsDir('working', 'module.exports = { works: true };');

  it('wasm when asked for by name, whatever is installed', () => {
    expect(chooseFaceBackend('wasm', working)).toEqual({
      backend: 'wasm',
      why: 'wasm backend (BIMS_EXTRACTION_BACKEND=wasm)',
    });
  });

  it('auto: native when onnxruntime-node is installed and loads', () => {
    expect(chooseFaceBackend('auto', working)).toEqual({ backend: 'native', why: 'native backend (onnxruntime-node)' });
    expect(chooseFaceBackend('native', working).backend).toBe('native');
  });

  it('auto: wasm, saying how to install the native backend, when onnxruntime-node is missing', () => {
    expect(chooseFaceBackend('auto', missing)).toEqual({
      backend: 'wasm',
      why: 'wasm backend: onnxruntime-node is not installed (`npm run native-backend` installs it: about half the CPU per face)',
    });
    // An application's install of the bims package has no tools/: the command is npm's, beside bims.
    const packaged = { toolsDir: join(root, 'no-tools'), besideBims: join(root, 'nowhere', 'bims.js') };
    expect(chooseFaceBackend('auto', packaged).why).toBe(
      'wasm backend: onnxruntime-node is not installed (`npm install onnxruntime-node --ignore-scripts` installs it: about half the CPU per face)',
    );
    expect(() => chooseFaceBackend('native', packaged)).toThrow(
      'run `npm install onnxruntime-node --ignore-scripts` (or set BIMS_EXTRACTION_BACKEND=wasm)',
    );
  });

  it("auto: wasm, with the loader's reason, when onnxruntime-node is there but cannot load on this host", () => {
    const choice = chooseFaceBackend('auto', broken);
    expect(choice.backend).toBe('wasm');
    expect(choice.why).toMatch(
      /^wasm backend: onnxruntime-node \(.*broken.*\) could not be loaded on this host \(libonnxruntime\.so\.1: cannot open shared object file\)$/,
    );
  });

  it('native asked for by name stops start-up with one line when it is missing or cannot load', () => {
    expect(() => chooseFaceBackend('native', missing)).toThrow(
      'BIMS_EXTRACTION_BACKEND=native needs onnxruntime-node, which is not installed: run `npm run native-backend` (or set BIMS_EXTRACTION_BACKEND=wasm)',
    );
    expect(() => chooseFaceBackend('native', broken)).toThrow(
      /^BIMS_EXTRACTION_BACKEND=native: onnxruntime-node \(.*\) could not be loaded on this host \(libonnxruntime\.so\.1: cannot open shared object file\); use BIMS_EXTRACTION_BACKEND=wasm$/,
    );
  });
});
