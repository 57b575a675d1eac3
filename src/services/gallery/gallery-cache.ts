import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/tables.js';
import { Gallery, type MatchCandidate, type MatcherThreads } from '../../biometrics/index.js';
import type { ServiceContext } from '../context.js';
import { changesAfter, latestChangeId, type LoggedChange } from './change-log.js';
import { databaseDigest, digestTerm, type GalleryDigest, type TemplateSource } from './digest.js';
import { GalleryChanges, type GalleryNotice } from './gallery-changes.js';

export { GALLERY_CHANNEL } from './gallery-changes.js';
export type { GalleryChanges } from './gallery-changes.js';

/**
 * The key of the transaction-scoped advisory lock that serialises deduplication across every process on one
 * PostgreSQL database ("BIMS" and 1). Only enrolments that deduplicate take it.
 */
const DEDUPLICATION_LOCK = 0x42494d53_0001;

/**
 * How this node learns of gallery changes made by other nodes. `listen`: PostgreSQL NOTIFY wakes it (or nobody
 * else writes: PGlite is one process), and it then reads the change log; `poll`: no LISTEN (Cloudflare
 * Workers), so every gallery search first reads the change log.
 */
export type GalleryFreshness = 'listen' | 'poll';

/** More unapplied changes than this and a full reload is cheaper than replaying them. */
const REPLAY_LIMIT = 1000;

/** A match with the client's subject identifier attached. */
export interface GalleryMatch extends MatchCandidate {
  /** subjects.id, the gallery key. */
  subjectRef: number;
  subjectId: string;
}

/** One gallery template as read from the database. */
interface TemplateRow {
  source: TemplateSource;
  rowId: number;
  subjectRef: number;
  subjectId: string;
  template: Uint8Array;
}

/** What the gallery holds of one subject, beside its templates in the matcher. */
interface Member {
  subjectId: string;
  templates: number;
  /** The sum of its templates' digest terms (digest.ts). */
  digest: bigint;
}

/** The last comparison of this node's gallery with the database. */
export interface ReconcileReport {
  at: string;
  /** The change-log position both sides were compared at. */
  changeId: number;
  inSync: boolean;
  memory: GalleryDigest;
  database: GalleryDigest;
}

/** What management info shows of the gallery. */
export interface GalleryState {
  subjects: number;
  templates: number;
  /** Digest of what this node holds now (digest.ts), comparable with the database's. */
  digest: string;
  /** The change-log id up to which this node has applied every change. */
  lastChangeId: number;
  reconciliation: { checks: number; driftsRepaired: number; last: ReconcileReport | null; lastDrift: ReconcileReport | null };
}

/**
 * The in-memory face and voice gallery of ENROLLED subjects, a projection of the database.
 *
 * Loaded once on first use, then changed only by replaying the gallery change log (change-log.ts) in commit
 * order, one replay at a time: every transaction that changes the gallery writes a log row before it commits,
 * and after the commit its own node replays the log ({@link transaction}) while other nodes replay it when a
 * NOTIFY wakes them (listen) or before each search (poll). Each replay reads the log rows and the subjects they
 * name in one snapshot, so a "put" of a subject deleted meanwhile finds nothing and removes it, and no change
 * can be applied out of order or twice concurrently. {@link reconcile} compares the whole gallery with the
 * database (a digest) and reloads it when they differ. Matching is exact, partitioned by template version.
 */
export class GalleryCache {
  private gallery: Gallery;
  private members = new Map<number, Member>();
  private loading: Promise<void> | null = null;
  /** Bumped by every reset, so a load that raced a reset is discarded instead of resurrecting rows. */
  private generation = 0;
  /** The highest change-log id whose effect the gallery holds; the next replay reads the rows after it. */
  private lastSeen = 0;
  /** Listen mode with the listening connection lost: poll like Workers until it is back and caught up. */
  private listenerDown = false;
  private listenerLosses = 0;
  /** A LISTEN subscription exists (PostgreSQL through `pg`); PGlite and Workers have none. */
  private listenerAttached = false;
  /** Replays and reconciliations run one at a time, in this queue. */
  private tail: Promise<void> = Promise.resolve();
  /** A replay queued but not started yet: it will read the log after any caller's moment, so callers share it. */
  private queuedReplay: Promise<void> | null = null;
  private checks = 0;
  private driftsRepaired = 0;
  private lastReport: ReconcileReport | null = null;
  private lastDrift: ReconcileReport | null = null;

  /**
   * @param threads matcher threads that share 1:N searches (Node's MatcherPool); without them a search runs on
   * this thread.
   */
  constructor(
    private readonly ctx: ServiceContext,
    private readonly freshness: GalleryFreshness = 'listen',
    private readonly threads?: MatcherThreads,
  ) {
    this.gallery = this.emptyGallery();
  }

  private emptyGallery(): Gallery {
    return new Gallery({ threads: this.threads });
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
    const seen = await latestChangeId(this.ctx.db);
    const gallery = this.emptyGallery();
    const members = new Map<number, Member>();
    const add = (row: TemplateRow) => {
      gallery.add(String(row.subjectRef), row.template);
      addMember(members, row);
    };
    const batch = 2000;
    let after = 0;
    for (;;) {
      const rows = await this.faceTemplates(this.ctx.db).where('f.id', '>', after).orderBy('f.id').limit(batch).execute();
      for (const row of rows) add(faceRow(row));
      if (rows.length < batch) break;
      after = rows[rows.length - 1]!.id;
    }
    // Voice: one template per subject (its recordings averaged), kept in the templates table.
    after = 0;
    for (;;) {
      const rows = await this.voiceTemplates(this.ctx.db).where('t.id', '>', after).orderBy('t.id').limit(batch).execute();
      for (const row of rows) add(voiceRow(row));
      if (rows.length < batch) break;
      after = rows[rows.length - 1]!.id;
    }
    if (generation !== this.generation) return;
    this.gallery = gallery;
    this.members = members;
    this.lastSeen = seen;
  }

  /** The face sample templates of ENROLLED subjects. */
  private faceTemplates(db: Kysely<Database>) {
    return db
      .selectFrom('face_samples as f')
      .innerJoin('subjects as s', 's.id', 'f.subject_ref')
      .select(['f.id', 'f.template', 's.id as subjectRef', 's.subject_id'])
      .where('s.status', '=', 'ENROLLED')
      .where('f.template', 'is not', null);
  }

  /** The VOICE templates of ENROLLED subjects. */
  private voiceTemplates(db: Kysely<Database>) {
    return db
      .selectFrom('templates as t')
      .innerJoin('subjects as s', 's.id', 't.subject_ref')
      .select(['t.id', 't.data', 's.id as subjectRef', 's.subject_id'])
      .where('s.status', '=', 'ENROLLED')
      .where('t.modality', '=', 'VOICE');
  }

  /**
   * Run `work` in one transaction that may change the gallery: the changes it notes on `changes` are announced
   * to every node as the transaction's last statements (change-log rows and, on PostgreSQL, a NOTIFY delivered
   * with the commit) and applied to this node's gallery after the commit. This is the only way to change the
   * gallery, so no service can announce a change without applying it here, or apply one its peers never hear of.
   *
   * @example
   * const stored = await services.gallery.transaction(async (trx, changes) => {
   *   await trx.updateTable('subjects').set({ status: 'ENROLLED' }).where('id', '=', ref).execute();
   *   changes.put(ref);
   *   return ref;
   * });
   */
  async transaction<T>(work: (trx: Transaction<Database>, changes: GalleryChanges) => Promise<T>): Promise<T> {
    const changes = new GalleryChanges();
    const result = await this.ctx.db.transaction().execute(async (trx) => {
      const value = await work(trx, changes);
      await changes.announce(trx, { dialect: this.ctx.dialect, nodeId: this.ctx.node.id });
      return value;
    });
    if (!changes.empty) await this.applyCommitted();
    return result;
  }

  /**
   * After a commit that announced a gallery change: apply it here (with every change committed before it), so
   * this node's next search sees it. Never throws: the commit stands, and a gallery that cannot catch up is
   * dropped and reloads from the database on its next use.
   */
  private async applyCommitted(): Promise<void> {
    try {
      await this.catchUp();
    } catch (error) {
      this.ctx.log.error('gallery catch-up after a commit failed; the gallery reloads', { reason: String(error) });
      this.forget();
    }
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
    if (this.ctx.dialect !== 'postgres') return;
    await sql`select pg_advisory_xact_lock(${DEDUPLICATION_LOCK})`.execute(trx);
    await this.catchUp();
  }

  /**
   * Benchmarks only: put templates in memory that no database row backs (to measure matching over a large
   * gallery without writing it). The next reconciliation finds them and reloads the gallery without them.
   */
  putUnrecorded(subjectRef: number, subjectId: string, templates: Uint8Array[]): void {
    this.gallery.replace(String(subjectRef), templates);
    this.members.set(subjectRef, { subjectId, templates: templates.length, digest: 0n });
  }

  /** Forget everything; the next use reloads from the database. */
  forget(): void {
    this.generation += 1;
    this.loading = null;
    this.gallery = this.emptyGallery();
    this.members = new Map();
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
      return this.lastReport;
    });
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(task, task);
    this.tail = run.then(() => undefined, () => undefined);
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
    if (!check && (await changesAfter(this.ctx.db, this.lastSeen, 1)).length === 0) return;
    const read = await this.ctx.db.transaction().setIsolationLevel('repeatable read').execute(async (trx) => {
      const changes = await changesAfter(trx, this.lastSeen, REPLAY_LIMIT + 1);
      // A reset, the pruned horizon (the rows this node needed are gone) or too long a backlog: reload.
      if (changes.length > REPLAY_LIMIT || changes.some((c) => c.kind === 'reset' || c.kind === 'pruned')) return { reload: true as const };
      const refs = changedRefs(changes);
      const rows = await this.readSubjects(trx, refs);
      const position = changes.length ? changes[changes.length - 1]!.id : this.lastSeen;
      const database = check ? await databaseDigest(trx) : null;
      return { reload: false as const, refs, rows, position, database };
    });
    if (generation !== this.generation) return;
    if (read.reload) {
      this.forget();
      await this.ready();
      if (check) await this.replay(true);
      return;
    }
    this.refresh(read.refs, read.rows);
    this.lastSeen = read.position;
    if (read.database) this.compare(read.database, read.position);
  }

  /** Record a comparison; on a difference, reload (the database is the truth) and count the repair. */
  private compare(database: GalleryDigest, changeId: number): void {
    const memory = this.digest();
    const inSync = memory.templates === database.templates && memory.sum === database.sum;
    this.checks += 1;
    this.lastReport = { at: this.ctx.now().toISOString(), changeId, inSync, memory, database };
    if (inSync) return;
    this.lastDrift = this.lastReport;
    this.driftsRepaired += 1;
    this.ctx.log.warn('gallery differed from the database; reloading it', { memory, database, changeId });
    this.forget();
    void this.ready().catch((error) => this.ctx.log.error('gallery could not be reloaded', { reason: String(error) }));
  }

  /** The gallery templates of these subjects (ENROLLED ones only) as the snapshot of `db` shows them. */
  private async readSubjects(db: Kysely<Database>, refs: number[]): Promise<TemplateRow[]> {
    if (refs.length === 0) return [];
    const faces = await this.faceTemplates(db).where('s.id', 'in', refs).orderBy('f.id').execute();
    const voices = await this.voiceTemplates(db).where('s.id', 'in', refs).orderBy('t.id').execute();
    return [...faces.map(faceRow), ...voices.map(voiceRow)];
  }

  /** Make these subjects' gallery entries what `rows` say: a subject without rows leaves the gallery. */
  private refresh(refs: number[], rows: TemplateRow[]): void {
    const bySubject = new Map<number, TemplateRow[]>();
    for (const row of rows) bySubject.set(row.subjectRef, [...(bySubject.get(row.subjectRef) ?? []), row]);
    for (const ref of refs) {
      const templates = bySubject.get(ref);
      this.members.delete(ref);
      if (!templates) {
        this.gallery.remove(String(ref));
        continue;
      }
      this.gallery.replace(String(ref), templates.map((t) => t.template));
      for (const row of templates) addMember(this.members, row);
    }
  }

  /** The digest of what this node holds (digest.ts). */
  private digest(): GalleryDigest {
    let templates = 0;
    let sum = 0n;
    for (const member of this.members.values()) {
      templates += member.templates;
      sum += member.digest;
    }
    return { templates, sum: sum.toString() };
  }

  /** The LISTEN subscription for gallery changes is in place (the runtime says so once it subscribed). */
  listenerStarted(): void {
    this.listenerAttached = true;
  }

  /** How this node stays fresh, for the metrics: its mode, the LISTEN connection's state, the reconciliations. */
  freshnessState(): { mode: GalleryFreshness; listener: 'none' | 'up' | 'down'; losses: number; reconciliations: number; driftsRepaired: number } {
    const listener = !this.listenerAttached ? 'none' : this.listenerDown ? 'down' : 'up';
    return { mode: this.freshness, listener, losses: this.listenerLosses, reconciliations: this.checks, driftsRepaired: this.driftsRepaired };
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

  /** 1:N: best `topK` subjects at or above `threshold` for one probe template, best first. */
  async identify(probe: Uint8Array, options: { topK: number; threshold: number; excludeRefs?: number[] }): Promise<GalleryMatch[]> {
    await this.ready();
    const exclude = new Set((options.excludeRefs ?? []).map(String));
    // Split across the matcher threads when there are some and the partition is large; a subject removed while
    // the threads scanned is no longer a member, and `named` drops it.
    return (await this.gallery.identifyAsync(probe, { topK: options.topK, threshold: options.threshold, exclude }))
      .map((m) => this.named(m))
      .filter((m): m is GalleryMatch => m !== null);
  }

  /** 1:1: the probe against one subject's best template; null when the subject has no templates of the probe's version. */
  async verify(probe: Uint8Array, subjectRef: number): Promise<GalleryMatch | null> {
    await this.ready();
    const match = this.gallery.verify(probe, String(subjectRef));
    return match ? this.named(match) : null;
  }

  /** How many subjects and templates are loaded, per template version. */
  async stats(): Promise<{ subjects: number; versions: Record<string, { subjects: number; templates: number }> }> {
    await this.upToDate();
    const versions: Record<string, { subjects: number; templates: number }> = {};
    for (const v of this.gallery.versions()) {
      const p = this.gallery.partition(v);
      versions[v] = { subjects: p.subjects, templates: p.size };
    }
    return { subjects: this.members.size, versions };
  }

  /**
   * What this node holds now, with the digest to compare with the database's and the reconciliation record.
   * No catch-up beyond what a search would do first (poll mode reads the log; listen mode trusts its
   * notifications), so a node that missed a change shows it.
   */
  async state(): Promise<GalleryState> {
    await this.upToDate();
    const digest = this.digest();
    return {
      subjects: this.members.size,
      templates: digest.templates,
      digest: digest.sum,
      lastChangeId: this.lastSeen,
      reconciliation: { checks: this.checks, driftsRepaired: this.driftsRepaired, last: this.lastReport, lastDrift: this.lastDrift },
    };
  }

  private named(m: MatchCandidate): GalleryMatch | null {
    const subjectRef = Number(m.subject);
    const member = this.members.get(subjectRef);
    return member === undefined ? null : { ...m, subjectRef, subjectId: member.subjectId };
  }
}

function faceRow(row: { id: number; template: Uint8Array | null; subjectRef: number; subject_id: string }): TemplateRow {
  return { source: 'face', rowId: row.id, subjectRef: row.subjectRef, subjectId: row.subject_id, template: row.template! };
}

function voiceRow(row: { id: number; data: Uint8Array; subjectRef: number; subject_id: string }): TemplateRow {
  return { source: 'voice', rowId: row.id, subjectRef: row.subjectRef, subjectId: row.subject_id, template: row.data };
}

function addMember(members: Map<number, Member>, row: TemplateRow): void {
  const member = members.get(row.subjectRef) ?? { subjectId: row.subjectId, templates: 0, digest: 0n };
  member.templates += 1;
  member.digest += digestTerm(row.source, row.rowId, row.subjectRef, row.template);
  members.set(row.subjectRef, member);
}

/** Every subject a run of changes names (puts and removes alike: a replay reads each as it is now). */
function changedRefs(changes: LoggedChange[]): number[] {
  const refs = new Set<number>();
  for (const change of changes) for (const ref of change.subjectRefs) refs.add(ref);
  return [...refs];
}
