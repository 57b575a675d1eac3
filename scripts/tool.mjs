// Tools that only some tests, builds or benchmarks need live in their own npm packages under tools/, outside
// the root install: wrangler and workerd (Cloudflare Workers: they require Node 22), deno (the Deno runtime
// test), onnxruntime-node (the native extraction backend, `npm run native-backend`, and the face benchmark's
// baseline) and Node 22 itself. `npm install` then neither
// downloads their few hundred MB nor warns about their engines and install scripts. Each is installed here, with
// `npm ci` from its pinned package-lock.json, the first time something asks for it, and again when its lock
// changes.
//
//   node scripts/tool.mjs deno deno/deno     -> prints the absolute path, installing tools/deno first if needed
//   import { toolPath } from './tool.mjs'     -> the same from code
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const toolsDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'tools');

/** Install tools/<name> unless its node_modules already matches its package-lock.json; returns its folder. */
export function ensureTool(name) {
  const dir = join(toolsDir, name);
  if (!existsSync(join(dir, 'package-lock.json')))
    throw new Error(`tools/${name} is not a tool package (no package-lock.json)`);
  const lockHash = createHash('sha256')
    .update(readFileSync(join(dir, 'package-lock.json')))
    .digest('hex');
  const stamp = join(dir, 'node_modules', '.bims-installed');
  const installed = () => existsSync(stamp) && readFileSync(stamp, 'utf8') === lockHash;
  if (installed()) return dir;
  // One installer at a time per tool (test files run in parallel); the others wait for its stamp.
  const lock = join(toolsDir, `.${name}.installing`);
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
      if (Date.now() > deadline) throw new Error(`timed out waiting for another install of tools/${name}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    }
  }
  try {
    if (!installed()) {
      console.error(`[tools] installing tools/${name} (npm ci) ...`);
      // --loglevel=error: the engine notices of Node-22-only packages are expected here (tools/node22 runs them).
      execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
        cwd: dir,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      writeFileSync(stamp, lockHash);
    }
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
  return dir;
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
