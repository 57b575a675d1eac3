// Fixture folders a script lays out from pinned downloads (fetch-test-speech decodes and joins about 20 CPU-s of
// audio), kept once per machine beside the downloads (download-cache.mjs), so that a fresh clone copies the result
// instead of making it again. Nothing is trusted from the cache: a folder is taken only when the digest of every
// file's path and bytes equals the one the script pins, which a fresh layout is also checked against.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { machineCache } from './machine-cache.mjs';

const LAYOUTS = machineCache('layouts');

function* filesUnder(dir) {
  // Dot files are the scripts' own stamps, written after the layout.
  for (const name of readdirSync(dir).sort()) {
    if (name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* filesUnder(path);
    else yield path;
  }
}

/** SHA-256 over every file's path (relative to `root`) and bytes under `dirs`, in a fixed order. */
export function layoutDigest(root, dirs) {
  const hash = createHash('sha256');
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    for (const file of filesUnder(dir)) hash.update(`${relative(root, file)}\n`).update(readFileSync(file));
  }
  return hash.digest('hex');
}

const archiveOf = (cache, name, digest) => join(cache, `${name}-${digest}.tar`);

/**
 * Lays the machine's copy of the folders `dirs` (under `root`) in place when it has the pinned digest; true if it
 * did. Anything else (no copy, another digest, a damaged archive) leaves the folders removed and answers false.
 */
export function restoreLayout(name, digest, root, dirs, cache = LAYOUTS) {
  const archive = archiveOf(cache, name, digest);
  if (!existsSync(archive)) return false;
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  try {
    execFileSync('tar', ['-xf', archive, '-C', root], { stdio: 'ignore' });
    if (layoutDigest(root, dirs) === digest) return true;
  } catch {
    // damaged or unreadable: made again below
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  return false;
}

/** Keeps the folders `dirs` (under `root`) for the machine's other checkouts, if they have the pinned digest. */
export function keepLayout(name, digest, root, dirs, cache = LAYOUTS) {
  try {
    mkdirSync(cache, { recursive: true });
    const aside = `${archiveOf(cache, name, digest)}.${process.pid}.part`;
    execFileSync('tar', ['-cf', aside, '-C', root, ...dirs.map((dir) => relative(root, dir))], { stdio: 'ignore' });
    renameSync(aside, archiveOf(cache, name, digest));
  } catch (error) {
    // A read-only home or a full disk costs the next clone a layout, nothing more.
    console.warn(`layout cache: could not keep ${name} (${error.message})`);
  }
}
