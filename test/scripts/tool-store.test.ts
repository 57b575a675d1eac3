// scripts/tool.mjs keeps each tool's install once per machine, in a store keyed by its package.json and lock, and
// links tools/<name>/node_modules of every clone to it. Real `npm ci` runs on a tool package without
// dependencies (no registry needed), in temporary folders standing for two clones and the store.
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureTool } from '../../scripts/tool.mjs';

let root: string;
const saved = process.env.BIMS_TOOLS_STORE;

/** A clone's tools/ folder with one tool package, `probe`, of this description. */
function cloneWithTool(name: string, description = 'a tool for the store test'): string {
  const tools = join(root, name, 'tools');
  mkdirSync(join(tools, 'probe'), { recursive: true });
  const manifest = { name: 'bims-tools-probe', version: '1.0.0', private: true, description };
  writeFileSync(join(tools, 'probe', 'package.json'), JSON.stringify(manifest));
  const lock = {
    name: manifest.name,
    version: manifest.version,
    lockfileVersion: 3,
    requires: true,
    packages: { '': { name: manifest.name, version: manifest.version } },
  };
  writeFileSync(join(tools, 'probe', 'package-lock.json'), JSON.stringify(lock));
  return tools;
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'bims-tool-store-'));
  process.env.BIMS_TOOLS_STORE = join(root, 'store');
});
afterEach(() => {
  if (saved === undefined) delete process.env.BIMS_TOOLS_STORE;
  else process.env.BIMS_TOOLS_STORE = saved;
  rmSync(root, { recursive: true, force: true });
});

describe('tools/ installs kept once per machine', () => {
  it("a second clone links to the first clone's install instead of installing again", () => {
    const first = cloneWithTool('clone-a');
    const second = cloneWithTool('clone-b');
    ensureTool('probe', first);
    const linked = join(first, 'probe', 'node_modules');
    expect(lstatSync(linked).isSymbolicLink()).toBe(true);
    const stored = realpathSync(linked);
    expect(stored.startsWith(realpathSync(join(root, 'store')))).toBe(true);
    // A mark left in the stored install is seen from the second clone: the same install, not a new `npm ci`
    // (which would have replaced the folder).
    writeFileSync(join(stored, 'mark'), 'first');
    ensureTool('probe', second);
    expect(readFileSync(join(second, 'probe', 'node_modules', 'mark'), 'utf8')).toBe('first');
    // Nothing half-made is left in the store: one entry, no staging folder or lock.
    expect(readdirSync(join(root, 'store'))).toEqual([stored.split('/').at(-2)]);
  });

  it('a changed package.json installs a new entry for that clone and leaves the other clone on its own', () => {
    const first = cloneWithTool('clone-a');
    const second = cloneWithTool('clone-b', 'the same tool, another pin');
    ensureTool('probe', first);
    ensureTool('probe', second);
    const a = realpathSync(join(first, 'probe', 'node_modules'));
    const b = realpathSync(join(second, 'probe', 'node_modules'));
    expect(a).not.toBe(b);
    expect(readdirSync(join(root, 'store')).sort()).toHaveLength(2);
  });

  it('an entry without its finished stamp (an install that was killed) is installed again', () => {
    const tools = cloneWithTool('clone-a');
    ensureTool('probe', tools);
    const stored = realpathSync(join(tools, 'probe', 'node_modules'));
    writeFileSync(join(stored, 'mark'), 'before');
    rmSync(join(stored, '.bims-installed'));
    ensureTool('probe', cloneWithTool('clone-b'));
    expect(readdirSync(stored)).toContain('.bims-installed');
    expect(readdirSync(stored)).not.toContain('mark');
  });

  it('installs in the clone when the store cannot be made', () => {
    writeFileSync(join(root, 'a-file'), '');
    process.env.BIMS_TOOLS_STORE = join(root, 'a-file', 'store');
    const tools = cloneWithTool('clone-a');
    ensureTool('probe', tools);
    const modules = join(tools, 'probe', 'node_modules');
    expect(lstatSync(modules).isDirectory()).toBe(true);
    expect(readdirSync(modules)).toContain('.bims-installed');
  });
});
