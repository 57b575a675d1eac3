// Where recorded analyses live: one JSON file per (kind, options, bytes), under a folder per pipeline
// fingerprint in the machine's cache ($XDG_CACHE_HOME/bims, else ~/.cache/bims, where the fixture scripts keep
// their downloads), shared by every checkout of the machine: the fingerprint hashes everything the analyses
// depend on, so two checkouts with the same pipeline share recordings, and a fresh clone replays what another
// recorded instead of starting a real pool in each suite that meets bytes it has not seen (the clean-clone runs
// of `npm test` had 96 recordings to make, from about 30 suites). Recordings derive from third-party photos and
// follow the pipeline, so they are made again wherever they are missing, never committed.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { machineCache } from '../../../scripts/machine-cache.mjs';

/** The cache folder of recordings (one folder per pipeline fingerprint inside). */
export const RECORDINGS_DIR = machineCache('recorded-analyses');

/** The kinds of call a recording answers (the Extractor's three analyses). */
export type RecordedKind = 'face' | 'voice' | 'token';

/** What the real pipeline answered: a value (remote-codec encoded) or a refusal of the bytes. */
export type RecordedOutcome = { value: unknown } | { error: { code: string; message: string } };

/** One recording as stored. */
export interface Recording {
  kind: RecordedKind;
  /** SHA-256 of the bytes, and the pipeline options, kept to say what a recording is when one is read by eye. */
  sha256: string;
  options: unknown;
  outcome: RecordedOutcome;
}

/** JSON with the keys of every object sorted, so that equal options give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v as object)
            .sort()
            .map((k) => [k, (v as Record<string, unknown>)[k]]),
        )
      : v,
  );
}

/** The name a recording is filed under: its kind, its options and its bytes, hashed together. */
export function recordingKey(kind: RecordedKind, options: unknown, bytes: Uint8Array): string {
  return createHash('sha256')
    .update(`${kind}\n${canonicalJson(options)}\n`)
    .update(bytes)
    .digest('hex');
}

/** Hours after which a folder of another fingerprint (a pipeline since changed) is removed. */
const STALE_HOURS = 24;

/** The recordings of one pipeline fingerprint. Safe for several processes at once (writes are renames). */
export class RecordingStore {
  readonly dir: string;
  private pruned = false;

  constructor(
    readonly fingerprint: string,
    readonly root: string = RECORDINGS_DIR,
  ) {
    this.dir = join(root, fingerprint);
  }

  /** The recording filed under `key`, or undefined. */
  read(key: string): Recording | undefined {
    try {
      return JSON.parse(readFileSync(join(this.dir, `${key}.json`), 'utf8')) as Recording;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /** Files `recording` under `key`: written aside, then renamed, so no reader sees half a file. */
  write(key: string, recording: Recording): void {
    mkdirSync(this.dir, { recursive: true });
    this.pruneOthers();
    const aside = join(this.dir, `.${key}.${process.pid}.${Math.random().toString(36).slice(2)}`);
    writeFileSync(aside, JSON.stringify(recording));
    renameSync(aside, join(this.dir, `${key}.json`));
  }

  /** The keys on file. */
  keys(): string[] {
    try {
      return readdirSync(this.dir)
        .filter((name) => name.endsWith('.json'))
        .map((name) => name.slice(0, -'.json'.length));
    } catch {
      return [];
    }
  }

  /** Removes the folders of other fingerprints untouched for a day (pipelines since changed in every checkout). */
  private pruneOthers(): void {
    if (this.pruned) return;
    this.pruned = true;
    const dayAgo = Date.now() - STALE_HOURS * 3600_000;
    for (const name of readdirSync(this.root)) {
      if (name === this.fingerprint) continue;
      const path = join(this.root, name);
      try {
        if (statSync(path).mtimeMs < dayAgo) rmSync(path, { recursive: true, force: true });
      } catch {
        // Another process removed it first.
      }
    }
  }
}
