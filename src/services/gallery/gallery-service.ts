import type { Kysely, Transaction } from 'kysely';
import { holdTransactionLock } from '../../db/repositories/gallery.js';
import type { Database } from '../../db/tables.js';
import type { ServiceContext } from '../context.js';
import { type CommittedChanges, GalleryChanges } from './gallery-changes.js';
import type { GalleryMatch } from './gallery-store.js';
import type { GalleryFreshness } from './gallery-sync.js';
import type { ReconcileReport, ReconciliationState } from './reconciliation.js';

/** What management info shows of the gallery. */
export interface GalleryState {
  subjects: number;
  templates: number;
  /** Digest of what this node holds now (digest.ts), comparable with the database's. */
  digest: string;
  /** The change-log id up to which this node has applied every change. */
  lastChangeId: number;
  reconciliation: ReconciliationState;
  /** A matcher cluster's parts (sharded/): the gallery is held there, and the figures above are their sums. */
  cluster?: ClusterState;
}

/** Each shard of a matcher cluster as one of its replicas reports it. */
interface ClusterState {
  shards: number;
  parts: { shard: number; subjects: number; templates: number; digest: string; lastChangeId: number }[];
  /** Shards no replica answered for (their figures are missing from the sums). */
  missing: number[];
}

/** Options of a 1:N search. */
export interface GallerySearch {
  topK: number;
  threshold: number;
  excludeRefs?: number[];
}

/**
 * The gallery as the services use it: the unit of work that changes it, the deduplication lock, and the
 * searches. Two implementations: the gallery in this process's memory (gallery-cache.ts, the default) and the
 * shards of a matcher cluster reached over NATS (sharded/sharded-gallery.ts, with BIMS_NATS_URL).
 */
export interface GalleryService {
  /**
   * Run `work` in one transaction that may change the gallery: the changes it notes on `changes` are announced
   * to every node as the transaction's last statements (change-log rows and, on PostgreSQL, a NOTIFY delivered
   * with the commit) and applied to this node's gallery after the commit.
   */
  transaction<T>(work: (trx: Transaction<Database>, changes: GalleryChanges) => Promise<T>): Promise<T>;
  /** Hold the database-wide deduplication lock for the rest of the transaction, with every change before it in view. */
  lockForDeduplication(trx: Kysely<Database>): Promise<void>;
  /** Resolves once the gallery can be searched. */
  ready(): Promise<void>;
  /** Resolves once the gallery holds every change committed before the call. */
  catchUp(): Promise<void>;
  /** Once per search: resolves once a search started now would see every change committed before it. */
  upToDate(): Promise<void>;
  /** 1:N: best `topK` subjects at or above `threshold` for one probe template, best first. */
  identify(probe: Uint8Array, options: GallerySearch): Promise<GalleryMatch[]>;
  /** 1:1: the probe against one subject's best template; null when the subject has none of the probe's version. */
  verify(probe: Uint8Array, subjectRef: number): Promise<GalleryMatch | null>;
  /** How many subjects and templates are held, per template version. */
  stats(): Promise<{ subjects: number; versions: Record<string, { subjects: number; templates: number }> }>;
  /** What is held now, with the digest to compare with the database's. */
  state(): Promise<GalleryState>;
  /** Compare the gallery with the database and reload it on a difference (null: nothing to compare here). */
  reconcile(): Promise<ReconcileReport | null>;
  /** Forget what is held; the next use reloads it. */
  forget(): void;
  /** A NOTIFY of another node's change arrived. */
  applyRemote(payload: string): Promise<void>;
  /** The LISTEN subscription is in place. */
  listenerStarted(): void;
  /** The LISTEN connection is lost. */
  resynchronise(): void;
  /** The LISTEN connection is back. */
  listenerRestored(): Promise<void>;
  /** Whether this gallery needs the LISTEN subscription (a cluster's shards listen themselves). */
  readonly listens: boolean;
  /** How this node stays fresh, for the metrics. */
  freshnessState(): {
    mode: GalleryFreshness;
    listener: 'none' | 'up' | 'down';
    losses: number;
    reconciliations: number;
    driftsRepaired: number;
  };
  /** Benchmarks only: templates in memory that no database row backs. */
  putUnrecorded(subjectRef: number, subjectId: string, templates: Uint8Array[]): void;
}

/**
 * The key of the transaction-scoped advisory lock that serialises deduplication across every process on one
 * PostgreSQL database ("BIMS" and 1). Only enrolments that deduplicate take it.
 */
const DEDUPLICATION_LOCK = 0x42494d53_0001;

/**
 * One transaction that may change the gallery (GalleryService.transaction): the changes `work` notes are written
 * to the change log as its last statements, and `apply` gets them once it committed (nothing for a rollback).
 */
export async function galleryTransaction<T>(
  ctx: ServiceContext,
  work: (trx: Transaction<Database>, changes: GalleryChanges) => Promise<T>,
  apply: (committed: CommittedChanges | null) => Promise<void>,
): Promise<T> {
  const changes = new GalleryChanges();
  const result = await ctx.db.transaction().execute(async (trx) => {
    const value = await work(trx, changes);
    await changes.announce(trx, { dialect: ctx.dialect, nodeId: ctx.node.id });
    return value;
  });
  if (!changes.empty) await apply(changes.committed());
  return result;
}

/**
 * Hold the database-wide deduplication lock for the rest of the transaction (PostgreSQL; PGlite is one process,
 * serialised by the caller's queue). Answers whether it was taken: the caller then brings its gallery up to
 * every change committed before the lock was granted.
 */
export async function holdDeduplicationLock(ctx: ServiceContext, trx: Kysely<Database>): Promise<boolean> {
  if (ctx.dialect !== 'postgres') return false;
  await holdTransactionLock(trx, DEDUPLICATION_LOCK);
  return true;
}
