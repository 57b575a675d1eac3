// The core must run unchanged on Node, Deno and Cloudflare Workers, so only the runtime entries, the sidecar
// (a Node process of its own) and the Node worker pool may touch Node: every other file under src/ is
// scanned for Node built-in imports and reads of `process`/`Buffer`. Tests beside the code (*.test.ts) run
// under vitest on Node only and are not part of what the other runtimes load.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scanSource } from './core-scan.js';

const root = join(import.meta.dirname, '..', '..');

/** Where Node is allowed: the entries that build deps from the environment, the sidecar, the Node pool. */
const NODE_ONLY = [
  /^src\/runtime\//,
  /^src\/sidecar\//,
  /^src\/extraction\/node-(pool|models|protocol)\.ts$/,
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|mts|js|mjs)$/.test(e.name) && !/\.test\.ts$/.test(e.name))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

describe('runtime-neutral core', () => {
  it('no file under src/ outside the runtime entries, the sidecar and the Node pool imports Node or reads process', () => {
    const files = sourceFiles(join(root, 'src')).filter((f) => !NODE_ONLY.some((re) => re.test(f)));
    expect(files.length).toBeGreaterThan(100);
    const offenders = files.flatMap((f) => scanSource(f, readFileSync(join(root, f), 'utf8')).map((x) => `${f}:${x.line} ${x.what}`));
    expect(offenders).toEqual([]);
  });

  it('the scan sees every form of Node dependency and ignores mere mentions', () => {
    const found = scanSource('x.ts', [
      "import { readFile } from 'node:fs/promises';",
      "import path from 'path';",
      "export * from 'worker_threads';",
      "const os = await import('node:os');",
      "const cp = require('child_process');",
      "type T = import('fs').Stats;",
      'const port = process.env.PORT;',
      'const b = Buffer.from("x");',
      "const { env } = process;",
      // Mentions only: a comment, a string, a property name, a key, a local property access.
      '// process.env is read by the runtime entry',
      "const s = 'process';",
      'const o = { process: 1 }; o.process; const { process: p } = o;',
      "import { z } from 'zod';",
    ].join('\n'));
    expect(found.map((f) => f.line)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});
