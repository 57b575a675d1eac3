import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { Gallery, type MatchCandidate } from '../../biometrics/index.js';
import type { ServiceContext } from '../context.js';

/** The PostgreSQL channel on which nodes tell each other what changed in the gallery. */
export const GALLERY_CHANNEL = 'bims_gallery';

/** A change one node made, for the others to apply: they re-read the subject rather than trust the message. */
type GalleryChange = { node: string; kind: 'put'; subjectRef: number } | { node: string; kind: 'remove'; subjectRefs: number[] } | { node: string; kind: 'reset' };

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
 */
export class GalleryCache {
  private gallery = new Gallery();
  private subjectIds = new Map<number, string>();
  private loading: Promise<void> | null = null;
  /** Bumped by every reset, so a load that raced a reset is discarded instead of resurrecting rows. */
  private generation = 0;

  constructor(private readonly ctx: ServiceContext) {}

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
   * sent after the commit would be lost with the process. Nothing to do on PGlite (nobody listens).
   */
  async announcePut(trx: Kysely<Database>, subjectRef: number): Promise<void> {
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
    if (this.ctx.dialect !== 'postgres' || subjectRefs.length === 0) return;
    const change: GalleryChange = { node: this.ctx.node.id, kind: 'remove', subjectRefs };
    await sql`select pg_notify(${GALLERY_CHANNEL}, ${JSON.stringify(change)})`.execute(trx);
  }

  /** Tell the other nodes, inside the clearing transaction, to forget their gallery (see announcePut). */
  async announceReset(trx: Kysely<Database>): Promise<void> {
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
    const rows = await this.ctx.db
      .selectFrom('face_samples as f')
      .innerJoin('subjects as s', 's.id', 'f.subject_ref')
      .select(['f.template', 's.subject_id'])
      .where('s.id', '=', change.subjectRef)
      .where('s.status', '=', 'ENROLLED')
      .where('f.template', 'is not', null)
      .execute();
    const voices = await this.voiceTemplates().where('s.id', '=', change.subjectRef).execute();
    if (rows.length === 0 && voices.length === 0) return this.drop([change.subjectRef]);
    this.gallery.replace(String(change.subjectRef), [...rows.map((r) => r.template!), ...voices.map((v) => v.data)]);
    this.subjectIds.set(change.subjectRef, rows[0]?.subject_id ?? voices[0]!.subject_id);
  }

  /** After a lost listening connection: changes may have been missed, so reload on next use. */
  resynchronise(): void {
    this.forget();
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
    await this.ready();
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
