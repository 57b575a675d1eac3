// Over 300 lines on purpose: one state machine (load, replay, reconcile, listener lost and restored) whose fields
// every transition reads; split, each part would need the others' private state.
import type { MatcherThreads } from '../../biometrics/matcher-types.js';
import { galleryChangesAfter, galleryTemplatesOf, latestGalleryChangeId } from '../../db/repositories/gallery.js';
import type { ServiceContext } from '../context.js';
import type { LoggedChange } from './change-log.js';
import { databaseDigest, type GalleryDigest } from './digest.js';
import type { CommittedChanges, GalleryNotice } from './gallery-changes.js';
import { GalleryStore } from './gallery-store.js';
import { holds, type SlotRange } from './sharded/shard-map.js';
import { Reconciliations, type ReconcileReport, type ReconciliationState } from './reconciliation.js';

/**
 * How this node learns of gallery changes made by other nodes. `listen`: PostgreSQL NOTIFY wakes it (or nobody
 * else writes: PGlite is one process), and it then reads the change log; `poll`: no LISTEN (Cloudflare
 * Workers), so every gallery search first reads the change log.
 */
export type GalleryFreshness = 'listen' | 'poll';

/** More unapplied changes than this and a full reload is cheaper than replaying them. */
const REPLAY_LIMIT = 1000;

/**
 * The protocol that keeps this node's gallery store (gallery-store.ts) a projection of the database.
 *
 * Loaded once on first use, then changed only by replaying the gallery change log (change-log.ts) in commit
 * order, one replay at a time: every transaction that changes the gallery writes a log row before it commits,
 * and after the commit its own node replays the log ({@link GalleryCache.transaction}) while other nodes replay
 * it when a NOTIFY wakes them (listen) or before each search (poll). Each replay reads the log rows and the
 * subjects they name in one snapshot, so a "put" of a subject deleted meanwhile finds nothing and removes it,
 * and no change can be applied out of order or twice concurrently. {@link reconcile} compares the whole
 * gallery with the database (a digest) and reloads it when they differ.
 */
export class GallerySync {
  /** What this node holds now; replaced whole by a load, changed in place by replays. */
  protected store: GalleryStore;
  private loading: Promise<void> | null = null;
  /** Bumped by every reset, so a load that raced a reset is discarded instead of resurrecting rows. */
  private generation = 0;
  /** The highest change-log id whose effect the gallery holds; the next replay reads the rows after it. */
  protected lastSeen = 0;
  /**
   * A load may hold the effect of changes after `lastSeen` (its templates are read after its position): until a
   * replay has brought those subjects to one snapshot, a committed change is not applied from memory.
   */
  private loadedAhead = false;
  /** Listen mode with the listening connection lost: poll like Workers until it is back and caught up. */
  private listenerDown = false;
  private listenerLosses = 0;
  /** A LISTEN subscription exists (PostgreSQL through `pg`); PGlite and Workers have none. */
  private listenerAttached = false;
  /** Replays and reconciliations run one at a time, in this queue. */
  private tail: Promise<void> = Promise.resolve();
  /** A replay queued but not started yet: it will read the log after any caller's moment, so callers share it. */
  private queuedReplay: Promise<void> | null = null;
  private readonly reconciliations = new Reconciliations();

  /**
   * @param threads matcher threads that share 1:N searches (Node's MatcherPool); without them a search runs on
   * this thread.
   * @param slots a matcher shard's part of the gallery (sharded/shard-map.ts): only the subjects of these slots
   * are loaded, replayed and compared with the database. Absent: the whole gallery.
   */
  constructor(
    protected readonly ctx: ServiceContext,
    private readonly freshness: GalleryFreshness = 'listen',
    private readonly threads?: MatcherThreads,
    protected readonly slots?: SlotRange,
  ) {
    this.store = new GalleryStore(this.threads);
  }

  /** Resolves once the gallery holds the database's ENROLLED templates. */
  ready(): Promise<void> {
    if (!this.loading) {
      const generation = this.generation;
      this.loading = this.load(generation).catch((error) => {
        if (this.generation === generation) this.loading = null;
        throw error;
      });
    }
    return this.loading;
  }

  private async load(generation: number): Promise<void> {
    // The change-log position is read BEFORE the templates, not after. The load is several queries, each
    // with its own snapshot (on Workers each on its own connection), so it is no single point in time.
    // Ids become visible in id order (see recordChange), so every change at or below `seen` had committed
    // before the first batch was read and is in what the load reads; every change after it is replayed by the
    // next replay, including one that committed halfway through the load and was read only in part.
    // Replaying a change the load already saw is harmless: a replay reads the subject as it is then.
    const seen = await latestGalleryChangeId(this.ctx.db);
    const store = await GalleryStore.load(this.ctx.db, this.threads, this.slots);
    if (generation !== this.generation) return;
    this.store = store;
    this.lastSeen = seen;
    this.loadedAhead = true;
  }

  /**
   * After a commit that announced a gallery change: apply it here (with every change committed before it), so
   * this node's next search sees it. Never throws: the commit stands, and a gallery that cannot catch up is
   * dropped and reloads from the database on its next use.
   *
   * `own`: the transaction's changes as it knows them (gallery-changes.ts). When the gallery holds every change
   * up to the one before them and nothing after, they are applied from memory, in the replay queue, with no
   * statement; otherwise (another change came between, or was already applied past them) the log is replayed.
   */
  protected async applyCommitted(own?: CommittedChanges | null): Promise<void> {
    try {
      if (own && (await this.applyOwn(own))) return;
      await this.catchUp();
    } catch (error) {
      this.ctx.log.error('gallery catch-up after a commit failed; the gallery reloads', { reason: String(error) });
      this.forget();
    }
  }

  /** Apply this node's own committed changes from memory if they follow exactly what the gallery holds. */
  private applyOwn(own: CommittedChanges): Promise<boolean> {
    return this.enqueue(async () => {
      // Not loaded: the first use loads from the database, which holds the change.
      if (!this.loading) return true;
      const generation = this.generation;
      await this.ready();
      // Forgotten meanwhile (after the commit): the reload reads the database, which holds the change.
      if (generation !== this.generation) return true;
      // At or past our last row: a replay already read the subjects as they were then (maybe later still).
      if (this.lastSeen >= own.last) return true;
      if (this.lastSeen !== own.previous || this.loadedAhead) return false;
      for (const step of own.steps) this.store.refresh(step.refs, [...step.templates]);
      this.lastSeen = own.last;
      return true;
    });
  }

  /** Forget everything; the next use reloads from the database. */
  forget(): void {
    this.generation += 1;
    this.loading = null;
    this.store = new GalleryStore(this.threads);
  }

  /** A NOTIFY from a node: read the change log (our own changes were applied after their commits). */
  async applyRemote(payload: string): Promise<void> {
    let notice: GalleryNotice;
    try {
      notice = JSON.parse(payload) as GalleryNotice;
    } catch {
      return;
    }
    if (notice.node === this.ctx.node.id) return;
    if (!this.loading) return; // not loaded yet: the first use reads the database anyway
    await this.catchUp();
  }

  /**
   * Resolves once the gallery holds every change committed before the call. In poll mode (and in listen mode
   * while the listening connection is down) that is one catch-up: one indexed read of the change log, plus
   * the changed subjects' templates when there are any. Call it once before the gallery reads that decide
   * something (an identification, a deduplication), not before each of their lookups.
   */
  async upToDate(): Promise<void> {
    await this.ready();
    if (this.freshness === 'poll' || this.listenerDown) await this.catchUp();
  }

  /**
   * Apply the change log's rows after the last one applied. Replays run one at a time; a caller arriving while
   * one runs (it may have read the log before the caller's moment) shares the next one.
   */
  catchUp(): Promise<void> {
    if (this.queuedReplay) return this.queuedReplay;
    const run = this.enqueue(() => {
      this.queuedReplay = null;
      return this.replay(false);
    });
    this.queuedReplay = run;
    return run;
  }

  /**
   * Compare the gallery with the database at one change-log position (after replaying up to it), and reload
   * it when they differ. Runs in the replay queue, so no change is applied while it compares.
   */
  reconcile(): Promise<ReconcileReport | null> {
    return this.enqueue(async () => {
      await this.replay(true);
      return this.reconciliations.latest;
    });
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(task, task);
    this.tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /**
   * One replay: the log rows after `lastSeen` and the subjects they name, read in one snapshot (repeatable
   * read), applied as that snapshot shows them. With `check`, the database digest is read in the same snapshot
   * and compared with the gallery once the rows are applied. The log is first peeked outside a transaction,
   * so the usual case (nothing new) stays one indexed query.
   */
  private async replay(check: boolean): Promise<void> {
    await this.ready();
    const generation = this.generation;
    if (!check && (await galleryChangesAfter(this.ctx.db, this.lastSeen, 1)).length === 0) {
      // Nothing after the position: a load before now cannot hold a later change either.
      if (generation === this.generation) this.loadedAhead = false;
      return;
    }
    const read = await this.ctx.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const changes = await galleryChangesAfter(trx, this.lastSeen, REPLAY_LIMIT + 1);
        // A reset, the pruned horizon (the rows this node needed are gone) or too long a backlog: reload.
        if (changes.length > REPLAY_LIMIT || changes.some((c) => c.kind === 'reset' || c.kind === 'pruned'))
          return { reload: true as const };
        const refs = changedRefs(changes, this.slots);
        const rows = await galleryTemplatesOf(trx, refs);
        const position = changes.length ? changes[changes.length - 1]!.id : this.lastSeen;
        const database = check ? await databaseDigest(trx, this.slots) : null;
        return { reload: false as const, refs, rows, position, database };
      });
    if (generation !== this.generation) return;
    if (read.reload) {
      this.forget();
      await this.ready();
      if (check) await this.replay(true);
      return;
    }
    this.store.refresh(read.refs, read.rows);
    this.lastSeen = read.position;
    // Every subject changed after the load's position now shows one snapshot at or after it.
    this.loadedAhead = false;
    if (read.database) this.compare(read.database, read.position);
  }

  /** Record a comparison; on a difference, reload (the database is the truth). */
  private compare(database: GalleryDigest, changeId: number): void {
    const memory = this.store.digest();
    const report = this.reconciliations.record(this.ctx.now(), changeId, memory, database);
    if (report.inSync) return;
    this.ctx.log.warn('gallery differed from the database; reloading it', { memory, database, changeId });
    this.forget();
    void this.ready().catch((error) => this.ctx.log.error('gallery could not be reloaded', { reason: String(error) }));
  }

  /** The reconciliations so far, for management info. */
  protected reconciliation(): ReconciliationState {
    return this.reconciliations.state();
  }

  /** The LISTEN subscription for gallery changes is in place (the runtime says so once it subscribed). */
  listenerStarted(): void {
    this.listenerAttached = true;
  }

  /** How this node stays fresh, for the metrics: its mode, the LISTEN connection's state, the reconciliations. */
  freshnessState(): {
    mode: GalleryFreshness;
    listener: 'none' | 'up' | 'down';
    losses: number;
    reconciliations: number;
    driftsRepaired: number;
  } {
    const listener = !this.listenerAttached ? 'none' : this.listenerDown ? 'down' : 'up';
    return {
      mode: this.freshness,
      listener,
      losses: this.listenerLosses,
      reconciliations: this.reconciliations.state().checks,
      driftsRepaired: this.reconciliations.state().driftsRepaired,
    };
  }

  /**
   * The listening connection is lost: notifications sent meanwhile are lost with it, so read the change log
   * before each search until {@link listenerRestored} has caught up.
   */
  resynchronise(): void {
    this.listenerDown = true;
    this.listenerLosses += 1;
  }

  /**
   * LISTEN is back: from now on notifications arrive, so one catch-up after this point covers the outage, and
   * a reconciliation checks that nothing was missed. Polling stops only if the connection was not lost again
   * meanwhile.
   */
  async listenerRestored(): Promise<void> {
    const losses = this.listenerLosses;
    await this.catchUp();
    if (losses === this.listenerLosses) this.listenerDown = false;
    await this.reconcile();
  }
}

/**
 * Every subject a run of changes names (puts and removes alike: a replay reads each as it is now); a shard's
 * replay keeps those of its slots, known from the id alone, so it reads no other shard's templates.
 */
function changedRefs(changes: LoggedChange[], slots?: SlotRange): number[] {
  const refs = new Set<number>();
  for (const change of changes) for (const ref of change.subjectRefs) if (!slots || holds(slots, ref)) refs.add(ref);
  return [...refs];
}
