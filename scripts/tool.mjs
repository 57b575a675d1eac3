// Tools that only some tests, builds or benchmarks need live in their own npm packages under tools/, outside
// the root install: wrangler and workerd (Cloudflare Workers: they require Node 22), deno (the Deno runtime
// test), onnxruntime-node (the native extraction backend, `npm run native-backend`, and the face benchmark's
// baseline) and Node 22 itself. `npm install` then neither
// downloads their few hundred MB nor warns about their engines and install scripts. Each is installed with
// `npm ci` from its pinned package-lock.json, the first time something asks for it, and again when its lock
// changes.
//
// The installs are kept once per machine, in a store keyed by the hash of the tool's package.json and lock
// (`$BIMS_TOOLS_STORE`, else `$XDG_CACHE_HOME/bims/tools`, else `~/.cache/bims/tools`), and tools/<name>/node_modules
// is a link to the store's: every clone and worktree of the same lock shares one install, as npm's own cache
// shares the tarballs. A clean clone's `npm test` would otherwise write the five tools' ~860 MB again (tens of
// CPU-s and a disk busy beside the suites). An install is made in a staging folder and renamed into the store only
// once `npm ci` succeeded, so a killed install leaves nothing that looks finished. Where the store cannot be made
// (a read-only home), the tool is installed in tools/<name>/node_modules as before.
//
//   node scripts/tool.mjs deno deno/deno     -> prints the absolute path, installing tools/deno first if needed
//   import { toolPath } from './tool.mjs'     -> the same from code
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineCache } from './machine-cache.mjs';

const toolsDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'tools');
const STAMP = '.bims-installed';

/** The machine's store of tool installs (see the header). */
export const toolStore = () => process.env.BIMS_TOOLS_STORE || machineCache('tools');

/** Install tools/<name> unless its node_modules already matches its package.json and lock; returns its folder. */
export function ensureTool(name, tools = toolsDir) {
  const dir = join(tools, name);
  if (!existsSync(join(dir, 'package-lock.json')))
    throw new Error(`tools/${name} is not a tool package (no package-lock.json)`);
  const hash = createHash('sha256');
  for (const file of ['package.json', 'package-lock.json']) hash.update(readFileSync(join(dir, file)));
  const lockHash = hash.digest('hex');
  const modules = join(dir, 'node_modules');
  const isInstalled = (folder) => readText(join(folder, STAMP)) === lockHash;
  if (isInstalled(modules)) return dir;
  // One installer at a time per tool (test files run in parallel); the others wait for its stamp.
  withLock(join(tools, `.${name}.installing`), `tools/${name}`, () => {
    if (isInstalled(modules)) return;
    const stored = storedInstall(name, dir, lockHash, isInstalled);
    removeModules(modules);
    if (stored) {
      symlinkSync(stored, modules, 'dir');
      return;
    }
    npmCi(name, dir);
    stamp(modules, lockHash);
  });
  return dir;
}

/**
 * The store's node_modules for this tool and lock, installed there first if needed; undefined when the store
 * cannot be written (the caller then installs in place). An `npm ci` that fails throws.
 */
function storedInstall(name, dir, lockHash, isInstalled) {
  const root = toolStore();
  try {
    mkdirSync(root, { recursive: true });
  } catch {
    return undefined;
  }
  const entry = join(root, `${name}-${lockHash.slice(0, 16)}`);
  const modules = join(entry, 'node_modules');
  if (isInstalled(modules)) return modules;
  withLock(`${entry}.installing`, `the stored tools/${name}`, () => {
    if (isInstalled(modules)) return;
    const staging = `${entry}.staging-${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging);
    for (const file of ['package.json', 'package-lock.json']) copyFileSync(join(dir, file), join(staging, file));
    try {
      npmCi(name, staging);
      stamp(join(staging, 'node_modules'), lockHash);
      rmSync(entry, { recursive: true, force: true });
      renameSync(staging, entry);
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  });
  return modules;
}

function npmCi(name, cwd) {
  console.error(`[tools] installing tools/${name} (npm ci) ...`);
  // --loglevel=error: the engine notices of Node-22-only packages are expected here (tools/node22 runs them).
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** tools/<name>/node_modules gone, whether a folder of an in-place install or a link to the store. */
function removeModules(modules) {
  const stat = lstatSync(modules, { throwIfNoEntry: false });
  if (stat?.isSymbolicLink()) rmSync(modules, { force: true });
  else if (stat) rmSync(modules, { recursive: true, force: true });
}

/** Marks an install finished (a tool without dependencies has no node_modules of its own after `npm ci`). */
function stamp(modules, lockHash) {
  mkdirSync(modules, { recursive: true });
  writeFileSync(join(modules, STAMP), lockHash);
}

function readText(file) {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** Runs `work` holding a lock folder; waits for another holder, and takes a lock left 15 minutes as stale. */
function withLock(lock, what, work) {
  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      // A lock left by an installer that was killed is stale after 15 minutes.
      if (Date.now() - statSync(lock, { throwIfNoEntry: false })?.mtimeMs > 15 * 60_000)
        rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`timed out waiting for another install of ${what}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    }
  }
  try {
    work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Absolute path of `file` (relative to node_modules) inside tools/<name>, installed first if needed. */
export function toolPath(name, file) {
  const path = join(ensureTool(name), 'node_modules', file);
  if (!existsSync(path)) throw new Error(`tools/${name} has no node_modules/${file} after npm ci`);
  return path;
}

/** `require` resolving from tools/<name> (for CommonJS packages such as onnxruntime-node). */
export function toolRequire(name) {
  return createRequire(join(ensureTool(name), 'package.json'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [name, file] = process.argv.slice(2);
  if (!name) {
    console.error('usage: node scripts/tool.mjs <tool> [file under its node_modules]');
    process.exit(2);
  }
  console.log(file ? toolPath(name, file) : ensureTool(name));
}
