import type { Kysely, Transaction } from 'kysely';
import type { MatcherThreads } from '../../biometrics/matcher-types.js';
import type { Database } from '../../db/tables.js';
import type { ServiceContext } from '../context.js';
import type { GalleryChanges } from './gallery-changes.js';
import {
  galleryTransaction,
  holdDeduplicationLock,
  type GallerySearch,
  type GalleryService,
  type GalleryState,
} from './gallery-service.js';
import type { GalleryMatch } from './gallery-store.js';
import { GallerySync, type GalleryFreshness } from './gallery-sync.js';
import type { SlotRange } from './sharded/shard-map.js';

/**
 * The in-memory face and voice gallery of ENROLLED subjects, a projection of the database: the store
 * (gallery-store.ts) kept in step by the change-log protocol (gallery-sync.ts). Services change the gallery
 * only through {@link transaction} and read it through the searches below. Matching is exact, partitioned by
 * template version.
 */
export class GalleryCache extends GallerySync implements GalleryService {
  readonly listens = true;

  /** The change-log id up to which this gallery has applied every change. */
  get appliedChangeId(): number {
    return this.lastSeen;
  }

  /**
   * @param slots a matcher shard's part of the gallery (sharded/shard-map.ts; a `bims matcher` process holds one
   * GalleryCache per shard). Absent: the whole gallery.
   */
  constructor(ctx: ServiceContext, freshness?: GalleryFreshness, threads?: MatcherThreads, slots?: SlotRange) {
    super(ctx, freshness, threads, slots);
  }

  /**
   * Run `work` in one transaction that may change the gallery: the changes it notes on `changes` are announced
   * to every node as the transaction's last statements (change-log rows and, on PostgreSQL, a NOTIFY delivered
   * with the commit) and applied to this node's gallery after the commit. This is the only way to change the
   * gallery, so no service can announce a change without applying it here, or apply one its peers never hear of.
   *
   * @example
   * const stored = await services.gallery.transaction(async (trx, changes) => {
   *   await markSubjectEnrolled(trx, ref);
   *   changes.put(ref);
   *   return ref;
   * });
   */
  transaction<T>(work: (trx: Transaction<Database>, changes: GalleryChanges) => Promise<T>): Promise<T> {
    // The transaction's own changes are applied from memory when nothing came between (gallery-sync.ts).
    return galleryTransaction(this.ctx, work, (committed) => this.applyCommitted(committed));
  }

  /**
   * Hold the database-wide deduplication lock for the rest of the transaction, then bring the gallery up to
   * every change committed before the lock was granted. Two enrolments of one person on two nodes therefore
   * take turns: the second matches against a gallery that holds the first (whose gallery row committed before
   * its lock was released). The catch-up reads on another connection of the pool. On PGlite (one process,
   * one connection, held by the transaction) it does nothing: the caller's in-process queue serialises, and the
   * caller catches up before opening the transaction.
   */
  async lockForDeduplication(trx: Kysely<Database>): Promise<void> {
    if (await holdDeduplicationLock(this.ctx, trx)) await this.catchUp();
  }

  /**
   * Benchmarks only: put templates in memory that no database row backs (to measure matching over a large
   * gallery without writing it). The next reconciliation finds them and reloads the gallery without them.
   */
  putUnrecorded(subjectRef: number, subjectId: string, templates: Uint8Array[]): void {
    this.store.putUnrecorded(subjectRef, subjectId, templates);
  }

  /** 1:N: best `topK` subjects at or above `threshold` for one probe template, best first. */
  async identify(probe: Uint8Array, options: GallerySearch): Promise<GalleryMatch[]> {
    await this.ready();
    const found = await this.store.search(probe, options);
    // Named by the store as it is once the search is over: a subject removed while the matcher threads scanned
    // is no longer a member and is dropped.
    return found.map((m) => this.store.named(m)).filter((m): m is GalleryMatch => m !== null);
  }

  /** 1:1: the probe against one subject's best template; null when the subject has no templates of the probe's version. */
  async verify(probe: Uint8Array, subjectRef: number): Promise<GalleryMatch | null> {
    await this.ready();
    return this.store.verify(probe, subjectRef);
  }

  /** How many subjects and templates are loaded, per template version. */
  async stats(): Promise<{ subjects: number; versions: Record<string, { subjects: number; templates: number }> }> {
    await this.upToDate();
    return { subjects: this.store.subjects, versions: this.store.partitions() };
  }

  /**
   * What this node holds now, with the digest to compare with the database's and the reconciliation record.
   * No catch-up beyond what a search would do first (poll mode reads the log; listen mode trusts its
   * notifications), so a node that missed a change shows it.
   */
  async state(): Promise<GalleryState> {
    await this.upToDate();
    const digest = this.store.digest();
    return {
      subjects: this.store.subjects,
      templates: digest.templates,
      digest: digest.sum,
      lastChangeId: this.lastSeen,
      reconciliation: this.reconciliation(),
    };
  }
}
