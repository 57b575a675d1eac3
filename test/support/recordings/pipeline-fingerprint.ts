// The fingerprint of the analysis pipeline that recordings (recorded-extractor.ts) are filed under: what the
// pipeline's answer for given bytes depends on. A change to any of it files new recordings under a new
// fingerprint, so a pipeline change (a new detector rule, another model, a dependency's new version) is
// re-recorded from the real pipeline on the next run instead of being answered from an old recording.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Bump when the recordings' own format changes (not the pipeline's: that is followed by the sources). */
export const RECORDING_FORMAT = 1;

/** The repository's root (this file is test/support/recordings/). */
export const REPOSITORY_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Where the pipeline starts: the worker thread that analyses in the Node pool (the recorder's real side), the
 * inline extractor and the pool itself (it passes the options on). Everything they import is followed.
 */
export const PIPELINE_ENTRIES = ['workers/face.worker.ts', 'src/extraction/inline.ts', 'src/extraction/node-pool.ts'];

/** The model manifests: each names its weights by SHA-256, and the runners refuse weights that differ. */
const MANIFESTS = ['wasm/models/manifest.json', 'wasm/models/voice-manifest.json'];

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g;

/** A bare specifier's package name (`@jsquash/jpeg/codec/x.wasm` -> `@jsquash/jpeg`), or null for node: built-ins. */
function packageOf(specifier: string): string | null {
  if (specifier.startsWith('node:')) return null;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** The file a relative specifier names: `x.js` is written for `x.ts` in this tree. */
function resolveRelative(from: string, specifier: string): string | null {
  const target = resolve(dirname(from), specifier);
  for (const candidate of [target, target.replace(/\.js$/, '.ts'), `${target}.ts`]) {
    if (existsSync(candidate) && !candidate.endsWith('/')) return candidate;
  }
  return null;
}

/**
 * The source files `entries` reach by their imports (static and dynamic, relative ones followed), and the
 * npm packages they import by name.
 */
export function importClosure(root: string, entries: readonly string[]): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const pending = entries.map((entry) => join(root, entry));
  while (pending.length) {
    const file = pending.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    if (!/\.(ts|mjs|js)$/.test(file)) continue;
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      if (specifier!.startsWith('.')) {
        const target = resolveRelative(file, specifier!);
        if (target) pending.push(target);
      } else {
        const name = packageOf(specifier!);
        if (name) packages.add(name);
      }
    }
  }
  return {
    files: [...files].map((f) => relative(root, f)).sort(),
    packages: [...packages].sort(),
  };
}

/** The installed version of an npm package (node_modules of `root`), or 'missing'. */
function installedVersion(root: string, name: string): string {
  const manifest = join(root, 'node_modules', name, 'package.json');
  return existsSync(manifest) ? (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version : 'missing';
}

/**
 * SHA-256 (hex, 24 characters) of what the pipeline's answers depend on: the recording format, Node's version
 * (V8's Math), the model manifests, every source file the pipeline entries reach and the version of every
 * package they import.
 */
export function pipelineFingerprint(root: string = REPOSITORY_ROOT, entries: readonly string[] = PIPELINE_ENTRIES) {
  const hash = createHash('sha256');
  hash.update(`format ${RECORDING_FORMAT}\nnode ${process.version}\n`);
  const { files, packages } = importClosure(root, entries);
  for (const file of [...MANIFESTS.filter((m) => existsSync(join(root, m))), ...files]) {
    hash.update(`file ${file}\n`);
    hash.update(readFileSync(join(root, file)));
  }
  for (const name of packages) hash.update(`package ${name}@${installedVersion(root, name)}\n`);
  return hash.digest('hex').slice(0, 24);
}
