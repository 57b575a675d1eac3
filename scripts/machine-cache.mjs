// The machine's cache of what every clone and worktree of BIMS may share (downloads, layouts, recorded analyses,
// tool installs, the migrated PGlite image): $XDG_CACHE_HOME/bims, else ~/.cache/bims. One place names it, so the
// caches stay side by side and a user who moves XDG_CACHE_HOME moves them all.
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The folder `name` of the machine's BIMS cache (not created here). */
export const machineCache = (name) => join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'bims', name);
