// The core must run unchanged on Node, Deno and Cloudflare Workers, so only the runtime entries, the Node
// processes of their own (sidecar, dashboard server) and the Node worker pool may touch Node: every other
// file under src/ is scanned for Node built-in imports and reads of `process`/`Buffer`. Tests beside the code
// (*.test.ts) run under vitest on Node only and are not part of what the other runtimes load. A second check
// follows the imports of the runtime-neutral start-up, so no core file can pull a Node-only one in.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scanSource, staticRelativeImports } from './core-scan.js';

const root = join(import.meta.dirname, '..', '..');

/** Where Node is allowed: the entries that build deps from the environment, the separate Node processes, the Node pool. */
const NODE_ONLY = [
  /^src\/runtime\//,
  /^src\/sidecar\//,
  // The dashboard's own server process (npm run dashboard; a child of npm start) and the esbuild step that bundles
  // the camera page's helper when it starts: never loaded by the app.
  /^src\/dashboard\/(main|node-server|node-capture-bundle)\.ts$/,
  // node-native-runner: onnxruntime-node, the native extraction backend, loaded by the pool's workers; node-face-backend:
  // the Node entries' choice of that backend (it loads onnxruntime-node once to see that it works on the host).
  /^src\/extraction\/node-(pool|pool-worker|models|protocol|native-runner|face-backend)\.ts$/,
  // The matcher's worker threads (FaceGallery takes them as an injected MatcherThreads).
  /^src\/biometrics\/node-matcher-pool\.ts$/,
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|mts|js|mjs)$/.test(e.name) && !/\.test\.ts$/.test(e.name))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

describe('runtime-neutral core', () => {
  it('no file under src/ outside the runtime entries, the separate Node processes and the Node pool imports Node or reads process', () => {
    const files = sourceFiles(join(root, 'src')).filter((f) => !NODE_ONLY.some((re) => re.test(f)));
    expect(files.length).toBeGreaterThan(100);
    const offenders = files.flatMap((f) =>
      scanSource(f, readFileSync(join(root, f), 'utf8')).map((x) => `${f}:${x.line} ${x.what}`),
    );
    expect(offenders).toEqual([]);
  });

  it('onnxruntime-node (a native addon) is named only by Node-only files', () => {
    const files = sourceFiles(join(root, 'src')).filter((f) => !NODE_ONLY.some((re) => re.test(f)));
    const naming = files.filter((f) => /['"`]onnxruntime-node['"`]/.test(readFileSync(join(root, f), 'utf8')));
    expect(naming).toEqual([]);
    // ... and the native runner is one of them, so the check above has something to keep out.
    expect(
      /['"`]onnxruntime-node['"`]/.test(readFileSync(join(root, 'src/extraction/node-native-runner.ts'), 'utf8')),
    ).toBe(true);
  });

  it('what the runtime-neutral start-up loads (bootstrap, the library entry) reaches no Node-only file', () => {
    const roots = ['src/runtime/bootstrap.ts', 'src/index.ts'];
    const seen = new Set<string>(roots);
    const queue = [...roots];
    const problems: string[] = [];
    while (queue.length) {
      const file = queue.shift()!;
      const text = readFileSync(join(root, file), 'utf8');
      problems.push(...scanSource(file, text).map((x) => `${file}:${x.line} ${x.what}`));
      for (const specifier of staticRelativeImports(file, text)) {
        const target = relative(root, join(root, dirname(file), specifier)).replace(/\.js$/, '.ts');
        if (!target.endsWith('.ts') || !existsSync(join(root, target)) || seen.has(target)) continue;
        if (NODE_ONLY.some((re) => re.test(target))) problems.push(`${file} loads the Node-only ${target}`);
        seen.add(target);
        queue.push(target);
      }
    }
    expect(seen.size).toBeGreaterThan(50);
    expect(problems).toEqual([]);
  });

  it('the scan sees every form of Node dependency and ignores mere mentions', () => {
    const found = scanSource(
      'x.ts',
      [
        "import { readFile } from 'node:fs/promises';",
        "import path from 'path';",
        "export * from 'worker_threads';",
        "const os = await import('node:os');",
        "const cp = require('child_process');",
        "type T = import('fs').Stats;",
        'const port = process.env.PORT;',
        'const b = Buffer.from("x");',
        'const { env } = process;',
        // Mentions only: a comment, a string, a property name, a key, a local property access.
        '// process.env is read by the runtime entry',
        "const s = 'process';",
        'const o = { process: 1 }; o.process; const { process: p } = o;',
        "import { z } from 'zod';",
      ].join('\n'),
    );
    expect(found.map((f) => f.line)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});
