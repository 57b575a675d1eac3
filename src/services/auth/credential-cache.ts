import type { ServiceContext } from '../context.js';

/**
 * What the Bearer check reads from the database on every request (the account behind a token, the OAuth
 * client behind a client token, whether a login's refresh-token family is revoked), kept briefly in memory
 * where that is exact: on PGlite, which is one process, so every change that could end a token is made by
 * this process and empties the cache ({@link credentialsChanged}) the moment it commits.
 *
 * On PostgreSQL several nodes share the database and nothing is cached: the check stays one query per
 * request (a prepared statement). A NOTIFY from the changing node was tried and measured: two service
 * processes, a token used on B, the account disabled through A, the very next request to B served from B's
 * cache in 7 to 11 of 64 trials (the listening backend had not yet been scheduled to pass the NOTIFY on, on a
 * busy machine), so a cache invalidated that way does not end tokens at once
 * (test/security/credential-cache.test.ts keeps that tested).
 *
 * A read that was under way when the cache was emptied does not fill it when it ends (a generation count),
 * entries live at most {@link TTL_MS} in any case, and at most {@link LIMIT} of each kind are kept.
 */

/** Longest life of a cached row, whatever happens. */
const TTL_MS = 30_000;
/** Most rows of one kind kept; the oldest go first. */
const LIMIT = 10_000;

/** Every cache of this process, so a local change empties them all (over-emptying is harmless). Weak: a node that is gone is forgotten. */
const caches = new Set<WeakRef<CredentialCache>>();

/**
 * A change that could end tokens (an account's password, role, enabled flag or name changed or deleted, a
 * login revoked, a client removed) has committed: every cache of this process forgets what it held. Call
 * after the commit, never inside the transaction (a read between would cache the old row again).
 */
export function credentialsChanged(): void {
  for (const ref of caches) {
    const cache = ref.deref();
    if (cache) cache.clear();
    else caches.delete(ref);
  }
}

interface Entry<T> {
  value: T;
  until: number;
}

/** One kind of cached row, by key. */
class Rows<K, T> {
  private rows = new Map<K, Entry<T>>();

  get(key: K, now: number): T | undefined {
    const entry = this.rows.get(key);
    if (!entry) return undefined;
    if (entry.until > now) return entry.value;
    this.rows.delete(key);
    return undefined;
  }

  set(key: K, value: T, now: number) {
    this.rows.delete(key);
    while (this.rows.size >= LIMIT) this.rows.delete(this.rows.keys().next().value!);
    this.rows.set(key, { value, until: now + TTL_MS });
  }

  clear() {
    this.rows.clear();
  }
}

export class CredentialCache {
  /** Raised by every emptying; a read that began under an older generation is not kept. */
  private generation = 0;
  /** Only a database no other process writes (PGlite) can be cached exactly. */
  readonly enabled: boolean;
  private readonly kinds = new Map<string, Rows<unknown, unknown>>();

  constructor(private readonly ctx: Pick<ServiceContext, 'dialect' | 'now'>) {
    this.enabled = ctx.dialect === 'pglite';
    if (this.enabled) caches.add(new WeakRef(this));
  }

  /** The cached row of `kind` under `key`, or `load()`'s answer (kept when nothing changed meanwhile and `keep` agrees). */
  async read<T>(
    kind: string,
    key: unknown,
    load: () => Promise<T>,
    keep: (value: T) => boolean = () => true,
  ): Promise<T> {
    if (!this.enabled) return load();
    const rows = this.rows(kind);
    const now = this.ctx.now().getTime();
    const hit = rows.get(key, now) as T | undefined;
    if (hit !== undefined) return hit;
    const generation = this.generation;
    const value = await load();
    if (generation === this.generation && keep(value)) rows.set(key, value, now);
    return value;
  }

  /** Empty every kind. */
  clear() {
    this.generation++;
    for (const rows of this.kinds.values()) rows.clear();
  }

  private rows(kind: string): Rows<unknown, unknown> {
    let rows = this.kinds.get(kind);
    if (!rows) this.kinds.set(kind, (rows = new Rows()));
    return rows;
  }
}
