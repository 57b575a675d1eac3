// `npm start`: BIMS's Node entry from the compiled build (dist/, made by `npm run build`) when there is one
// at least as new as every source file, else from the TypeScript sources (a fresh clone has no dist/; a
// checkout edited since its last build must not run stale code). The compiled build starts in about 2 s
// instead of 4-6.5 s and holds less memory; requests are served at the same speed either way.
// Run with tsx's loader (`node --import tsx`), which the sources need and the child processes inherit;
// the compiled modules are plain JavaScript and pass through it untouched.
// `--max-semi-space-size=32` (package.json; V8's default is 16 MB): what a request, a poll or a frame's analysis
// holds for a few hundred milliseconds dies young instead of being promoted, and the old generation (80 MB in
// the capture bench) is collected less often. Six live captures on two loaded cores: the service's CPU per
// analysed frame 0.88 of the default's, its GC and compiler threads 19 ms per frame instead of 28 (issue 33,
// docs/benchmarks.md). `npm run bench` runs with the same flag, so a bench measures what this runs.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '..');
const compiled = join(root, 'dist', 'src', 'runtime', 'node.js');

/** The newest modification time of any file under `dir`. */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

const useBuild = existsSync(compiled) && statSync(compiled).mtimeMs >= newest(join(root, 'src'));
if (!useBuild && existsSync(compiled))
  console.error('[start] dist/ is older than src/: running the sources (npm run build to use the build)');
await import(pathToFileURL(useBuild ? compiled : join(root, 'src', 'runtime', 'node.ts')).href);
