import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { Gallery, type MatchCandidate } from '../../biometrics/index.js';
import type { ServiceContext } from '../context.js';
import { changesAfter, latestChangeId, recordChange } from './change-log.js';

/** The PostgreSQL channel on which nodes tell each other what changed in the gallery. */
export const GALLERY_CHANNEL = 'bims_gallery';

/** A change one node made, for the others to apply: they re-read the subject rather than trust the message. */
type GalleryChange = { node: string; kind: 'put'; subjectRef: number } | { node: string; kind: 'remove'; subjectRefs: number[] } | { node: string; kind: 'reset' };

/**
 * How this node learns of gallery changes made by other nodes. `listen`: PostgreSQL NOTIFY delivers them (or
 * nobody else writes: PGlite is one process); the change log is read only after the listening connection was
 * lost. `poll`: no LISTEN (Cloudflare Workers), so every gallery search first reads the change log.
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

/**
 * The in-memory face and voice gallery of ENROLLED subjects, kept in step with the database: loaded once on
 * first use (every face sample template and the voice template of every ENROLLED subject), then changed only after the transaction that
 * changes the database has committed (enrolment adds, deletion removes, adjudication adds or removes).
 * Matching is exact (the matcher compares against every template), partitioned by template version.
 * Other nodes' changes arrive by NOTIFY or, without LISTEN, from the change log (change-log.ts) read by
 * {@link upToDate} before each search.
 */
export class GalleryCache {
  private gallery = new Gallery();
  private subjectIds = new Map<number, string>();
  private loading: Promise<void> | null = null;
  /** Bumped by every reset, so a load that raced a reset is discarded instead of resurrecting rows. */
  private generation = 0;
  /** The highest change-log id whose effect the gallery holds; the next catch-up reads the rows after it. */
  private lastSeen = 0;
  /** Listen mode with the listening connection lost: poll like Workers until it is back and caught up. */
  private listenerDown = false;
  private listenerLosses = 0;
  private catching: Promise<void> | null = null;
  private queuedCatchUp: Promise<void> | null = null;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly freshness: GalleryFreshness = 'listen',
  ) {}

  /** Resolves once the gallery holds the database's ENROLLED templates. */
  ready(): Promise<void> {
    if (!this.loading) {
      const generation = this.generation;
      this.loading = this.load(generation).catch((error) => {
        this.loading = null;
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
    // next catch-up, including one that committed halfway through the load and was read only in part.
    // Replaying a change the load already saw is harmless: a put re-reads the subject as it is now.
    // Reading the position after the load instead would skip a change committed between the two.
    const seen = await latestChangeId(this.ctx.db);
    const gallery = new Gallery();
    const subjectIds = new Map<number, string>();
    const batch = 2000;
    let after = 0;
    for (;;) {
      const rows = await this.ctx.db
        .selectFrom('face_samples as f')
        .innerJoin('subjects as s', 's.id', 'f.subject_ref')
        .select(['f.id', 'f.template', 's.id as subjectRef', 's.subject_id'])
        .where('s.status', '=', 'ENROLLED')
        .where('f.template', 'is not', null)
        .where('f.id', '>', after)
        .orderBy('f.id')
        .limit(batch)
        .execute();
      for (const row of rows) {
        gallery.add(String(row.subjectRef), row.template!);
        subjectIds.set(row.subjectRef, row.subject_id);
      }
      if (rows.length < batch) break;
      after = rows[rows.length - 1]!.id;
    }
    // Voice: one template per subject (its recordings averaged), kept in the templates table.
    after = 0;
    for (;;) {
      const rows = await this.voiceTemplates().where('t.id', '>', after).orderBy('t.id').limit(batch).execute();
      for (const row of rows) {
        gallery.add(String(row.subjectRef), row.data);
        subjectIds.set(row.subjectRef, row.subject_id);
      }
      if (rows.length < batch) break;
      after = rows[rows.length - 1]!.id;
    }
    if (generation !== this.generation) return;
    this.gallery = gallery;
    this.subjectIds = subjectIds;
    this.lastSeen = seen;
  }

  /** The VOICE templates of ENROLLED subjects. */
  private voiceTemplates() {
    return this.ctx.db
      .selectFrom('templates as t')
      .innerJoin('subjects as s', 's.id', 't.subject_ref')
      .select(['t.id', 't.data', 's.id as subjectRef', 's.subject_id'])
      .where('s.status', '=', 'ENROLLED')
      .where('t.modality', '=', 'VOICE');
  }

  /**
   * Put a subject's templates in the gallery (replacing any it had); call after the commit. `announced`:
   * the transaction already told the other nodes ({@link announcePut}), so do not tell them again.
   */
  async put(subjectRef: number, subjectId: string, templates: Uint8Array[], options: { announced?: boolean } = {}): Promise<void> {
    await this.ready();
    this.gallery.replace(String(subjectRef), templates);
    this.subjectIds.set(subjectRef, subjectId);
    if (!options.announced) await this.publish({ node: this.ctx.node.id, kind: 'put', subjectRef });
  }

  /**
   * Tell the other nodes, inside the transaction that writes the subject, that it joins the gallery.
   * PostgreSQL delivers a NOTIFY when (and only when) its transaction commits, so a process killed between
   * its commit and its next statement cannot leave the other nodes without a subject it stored; a NOTIFY
   * sent after the commit would be lost with the process. The change log row (read by nodes without LISTEN)
   * is written in the same transaction for the same reason. No NOTIFY on PGlite (nobody listens).
   */
  async announcePut(trx: Kysely<Database>, subjectRef: number): Promise<void> {
    await recordChange(trx, 'put', [subjectRef]);
    if (this.ctx.dialect !== 'postgres') return;
    const change: GalleryChange = { node: this.ctx.node.id, kind: 'put', subjectRef };
    await sql`select pg_notify(${GALLERY_CHANNEL}, ${JSON.stringify(change)})`.execute(trx);
  }

  /** Take subjects out of the gallery; call after the commit that deleted or un-enrolled them. */
  async remove(subjectRefs: number[], options: { announced?: boolean } = {}): Promise<void> {
    await this.ready();
    this.drop(subjectRefs);
    if (!options.announced) await this.publish({ node: this.ctx.node.id, kind: 'remove', subjectRefs });
  }

  /** Tell the other nodes, inside the deleting transaction, that these subjects leave the gallery (see announcePut). */
  async announceRemove(trx: Kysely<Database>, subjectRefs: number[]): Promise<void> {
    if (subjectRefs.length === 0) return;
    await recordChange(trx, 'remove', subjectRefs);
    if (this.ctx.dialect !== 'postgres') return;
    const change: GalleryChange = { node: this.ctx.node.id, kind: 'remove', subjectRefs };
    await sql`select pg_notify(${GALLERY_CHANNEL}, ${JSON.stringify(change)})`.execute(trx);
  }

  /** Tell the other nodes, inside the clearing transaction, to forget their gallery (see announcePut). */
  async announceReset(trx: Kysely<Database>): Promise<void> {
    await recordChange(trx, 'reset');
    if (this.ctx.dialect !== 'postgres') return;
    const change: GalleryChange = { node: this.ctx.node.id, kind: 'reset' };
    await sql`select pg_notify(${GALLERY_CHANNEL}, ${JSON.stringify(change)})`.execute(trx);
  }

  /** Forget everything; the next use reloads from the database (after bulk deletes and truncation). */
  reset(options: { announced?: boolean } = {}): void {
    this.forget();
    if (!options.announced) void this.publish({ node: this.ctx.node.id, kind: 'reset' });
  }

  private drop(subjectRefs: number[]): void {
    for (const ref of subjectRefs) {
      this.gallery.remove(String(ref));
      this.subjectIds.delete(ref);
    }
  }

  private forget(): void {
    this.generation += 1;
    this.loading = null;
    this.gallery = new Gallery();
    this.subjectIds = new Map();
  }

  /**
   * Tell the other nodes sharing the database (PostgreSQL NOTIFY; harmless on PGlite, where nobody listens).
   * Best effort: a node that misses a message is resynchronised when its listening connection comes back.
   */
  private async publish(change: GalleryChange): Promise<void> {
    if (this.ctx.dialect !== 'postgres') return;
    try {
      await sql`select pg_notify(${GALLERY_CHANNEL}, ${JSON.stringify(change)})`.execute(this.ctx.db);
    } catch (error) {
      this.ctx.log.warn('gallery change not published', { reason: String(error) });
    }
  }

  /** Apply a change another node published: re-read the subject's ENROLLED templates from the database. */
  async applyRemote(payload: string): Promise<void> {
    let change: GalleryChange;
    try {
      change = JSON.parse(payload) as GalleryChange;
    } catch {
      return;
    }
    if (change.node === this.ctx.node.id) return;
    if (change.kind === 'reset') return this.forget();
    if (!this.loading) return; // not loaded yet: the first use reads the database anyway
    await this.ready();
    if (change.kind === 'remove') return this.drop(change.subjectRefs);
    this.refresh([change.subjectRef], await this.readSubjects([change.subjectRef]));
  }

  /** The ENROLLED face and voice templates of these subjects as the database holds them now; absent: not in the gallery. */
  private async readSubjects(refs: number[]): Promise<Map<number, { subjectId: string; templates: Uint8Array[] }>> {
    const found = new Map<number, { subjectId: string; templates: Uint8Array[] }>();
    if (refs.length === 0) return found;
    const faces = await this.ctx.db
      .selectFrom('face_samples as f')
      .innerJoin('subjects as s', 's.id', 'f.subject_ref')
      .select(['f.template', 's.id as subjectRef', 's.subject_id'])
      .where('s.id', 'in', refs)
      .where('s.status', '=', 'ENROLLED')
      .where('f.template', 'is not', null)
      .orderBy('f.id')
      .execute();
    const voices = await this.voiceTemplates().where('s.id', 'in', refs).orderBy('t.id').execute();
    for (const row of [...faces.map((f) => ({ ...f, data: f.template! })), ...voices]) {
      const entry = found.get(row.subjectRef) ?? { subjectId: row.subject_id, templates: [] };
      entry.templates.push(row.data);
      found.set(row.subjectRef, entry);
    }
    return found;
  }

  /** Make these subjects' gallery entries what `current` says (read by {@link readSubjects}). */
  private refresh(refs: number[], current: Map<number, { subjectId: string; templates: Uint8Array[] }>): void {
    for (const ref of refs) {
      const entry = current.get(ref);
      if (!entry) {
        this.drop([ref]);
        continue;
      }
      this.gallery.replace(String(ref), entry.templates);
      this.subjectIds.set(ref, entry.subjectId);
    }
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
   * Apply the change log's rows after the last one applied. A catch-up already running may have read the log
   * before the caller's moment, so callers arriving meanwhile share one more catch-up that starts after it.
   */
  catchUp(): Promise<void> {
    if (!this.catching) {
      this.catching = this.replay().finally(() => {
        this.catching = null;
      });
      return this.catching;
    }
    this.queuedCatchUp ??= this.catching
      .catch(() => {})
      .then(() => {
        this.queuedCatchUp = null;
        return this.catchUp();
      });
    return this.queuedCatchUp;
  }

  private async replay(): Promise<void> {
    await this.ready();
    const generation = this.generation;
    const changes = await changesAfter(this.ctx.db, this.lastSeen, REPLAY_LIMIT + 1);
    if (generation !== this.generation || changes.length === 0) return;
    // A reset, the pruned horizon (the rows this node needed are gone) or too long a backlog: reload. The
    // reload reads the log position again before its first query, so it covers every row read here.
    if (changes.length > REPLAY_LIMIT || changes.some((c) => c.kind === 'reset' || c.kind === 'pruned')) {
      this.forget();
      return this.ready();
    }
    // A put re-reads the subject as it is now, which also covers a later removal of the same subject, so the
    // order of puts and removes does not matter once resets are ruled out.
    const puts = new Set<number>();
    const removes = new Set<number>();
    for (const change of changes) for (const ref of change.subjectRefs) (change.kind === 'put' ? puts : removes).add(ref);
    const current = await this.readSubjects([...puts]);
    if (generation !== this.generation) return;
    this.drop([...removes].filter((ref) => !puts.has(ref)));
    this.refresh([...puts], current);
    this.lastSeen = changes[changes.length - 1]!.id;
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
   * LISTEN is back: from now on notifications arrive, so one catch-up after this point covers the outage.
   * Polling stops only if the connection was not lost again meanwhile.
   */
  async listenerRestored(): Promise<void> {
    const losses = this.listenerLosses;
    await this.catchUp();
    if (losses === this.listenerLosses) this.listenerDown = false;
  }

  /** 1:N: best `topK` subjects at or above `threshold` for one probe template, best first. */
  async identify(probe: Uint8Array, options: { topK: number; threshold: number; excludeRefs?: number[] }): Promise<GalleryMatch[]> {
    await this.ready();
    const exclude = new Set((options.excludeRefs ?? []).map(String));
    return this.gallery
      .identify(probe, { topK: options.topK, threshold: options.threshold, exclude })
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
    return { subjects: this.subjectIds.size, versions };
  }

  private named(m: MatchCandidate): GalleryMatch | null {
    const subjectRef = Number(m.subject);
    const subjectId = this.subjectIds.get(subjectRef);
    return subjectId === undefined ? null : { ...m, subjectRef, subjectId };
  }
}
