// Types of scripts/machine-cache.mjs for the TypeScript that uses it (tests).
/** The folder `name` of the machine's BIMS cache ($XDG_CACHE_HOME/bims, else ~/.cache/bims; not created here). */
export function machineCache(name: string): string;
