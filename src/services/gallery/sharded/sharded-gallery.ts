import type { Kysely, Transaction } from 'kysely';
import { latestGalleryChangeId } from '../../../db/repositories/gallery.js';
import type { Database } from '../../../db/tables.js';
import type { ServiceContext } from '../../context.js';
import type { GalleryChanges } from '../gallery-changes.js';
import {
  galleryTransaction,
  holdDeduplicationLock,
  type GallerySearch,
  type GalleryService,
  type GalleryState,
} from '../gallery-service.js';
import type { GalleryMatch } from '../gallery-store.js';
import type { ReconcileReport } from '../reconciliation.js';
import type { ChangePosition, MatcherCluster } from './matcher-cluster.js';

/**
 * The gallery of an API node whose matching is done by a matcher cluster (BIMS_NATS_URL): this process holds no
 * template. Changes go through the same unit of work (the change log and the NOTIFY, which the shard processes
 * replay), deduplication takes the same database-wide lock, and each search reads the change log's position
 * while the probe travels: every answer used is from a shard that had applied that position before its scan (a
 * shard behind it is asked again with it), so a search sees every change committed (on any node) before it
 * began, and a deduplication under the lock sees every enrolment that held the lock before it.
 */
export class ShardedGallery implements GalleryService {
  readonly listens = false;
  /** The highest change-log id this node has read or committed (every one of them is in the log). */
  private known = 0;

  constructor(
    private readonly ctx: ServiceContext,
    readonly cluster: MatcherCluster,
  ) {}

  transaction<T>(work: (trx: Transaction<Database>, changes: GalleryChanges) => Promise<T>): Promise<T> {
    // Nothing to apply here: the shards hear of the commit by its NOTIFY, and every search carries its position.
    return galleryTransaction(this.ctx, work, async (committed) => {
      this.saw(committed?.last ?? 0);
    });
  }

  async lockForDeduplication(trx: Kysely<Database>): Promise<void> {
    // The search that follows reads the change log's position after the lock was granted.
    await holdDeduplicationLock(this.ctx, trx);
  }

  async ready(): Promise<void> {}
  async catchUp(): Promise<void> {}
  async upToDate(): Promise<void> {}

  async identify(probe: Uint8Array, options: GallerySearch): Promise<GalleryMatch[]> {
    return this.cluster.identify(probe, options, this.position());
  }

  async verify(probe: Uint8Array, subjectRef: number): Promise<GalleryMatch | null> {
    return this.cluster.verify(probe, subjectRef, this.position());
  }

  /**
   * The position a search starting now must be answered at: the change log's latest id, read while the probe
   * travels (the cluster re-asks a shard that answered from before it), and as the first request's floor the
   * highest id this node has read or committed, so that a node reading its own writes is seldom re-asked.
   */
  private position(): ChangePosition {
    const latest = latestGalleryChangeId(this.ctx.db).then((id) => this.saw(id));
    return { floor: this.known, latest };
  }

  private saw(changeId: number): number {
    if (changeId > this.known) this.known = changeId;
    return changeId;
  }

  /** The shards' figures summed (those that answered: the metrics are not worth a 503). */
  async stats(): Promise<{ subjects: number; versions: Record<string, { subjects: number; templates: number }> }> {
    const { states } = await this.cluster.states();
    const versions: Record<string, { subjects: number; templates: number }> = {};
    for (const state of states)
      for (const [version, v] of Object.entries(state.versions)) {
        const sum = (versions[version] ??= { subjects: 0, templates: 0 });
        sum.subjects += v.subjects;
        sum.templates += v.templates;
      }
    return { subjects: states.reduce((n, s) => n + s.subjects, 0), versions };
  }

  /**
   * The cluster's gallery as management info shows a node's: the digests of disjoint parts add up to the digest
   * of the whole, so `digest` compares with the database's as one process's does once every shard answered.
   */
  async state(): Promise<GalleryState> {
    const { states, missing } = await this.cluster.states(await latestGalleryChangeId(this.ctx.db));
    const parts = states.map((s) => ({
      shard: s.shard,
      subjects: s.subjects,
      templates: s.templates,
      digest: s.digest,
      lastChangeId: s.lastChangeId,
    }));
    return {
      subjects: parts.reduce((n, p) => n + p.subjects, 0),
      templates: parts.reduce((n, p) => n + p.templates, 0),
      digest: parts.reduce((sum, p) => sum + BigInt(p.digest), 0n).toString(),
      lastChangeId: parts.length ? Math.min(...parts.map((p) => p.lastChangeId)) : 0,
      // Each shard process reconciles its own part (BIMS_GALLERY_RECONCILE_SECONDS there).
      reconciliation: { checks: 0, driftsRepaired: 0, last: null, lastDrift: null },
      cluster: { shards: this.cluster.options.shards, parts, missing },
    };
  }

  async reconcile(): Promise<ReconcileReport | null> {
    return null;
  }

  forget(): void {}
  async applyRemote(): Promise<void> {}
  listenerStarted(): void {}
  resynchronise(): void {}
  async listenerRestored(): Promise<void> {}

  freshnessState() {
    return { mode: 'listen' as const, listener: 'none' as const, losses: 0, reconciliations: 0, driftsRepaired: 0 };
  }

  putUnrecorded(): void {
    throw new Error('a matcher cluster holds the gallery: templates cannot be put into an API node');
  }
}
