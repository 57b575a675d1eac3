import { Gallery, type MatchCandidate } from '../../biometrics/index.js';
import type { ServiceContext } from '../context.js';

/** A match with the client's subject identifier attached. */
export interface GalleryMatch extends MatchCandidate {
  /** subjects.id, the gallery key. */
  subjectRef: number;
  subjectId: string;
}

/**
 * The in-memory face gallery of ENROLLED subjects, kept in step with the database: loaded once on first use
 * (every face sample template of every ENROLLED subject), then changed only after the transaction that
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
    if (generation !== this.generation) return;
    this.gallery = gallery;
    this.subjectIds = subjectIds;
  }

  /** Put a subject's templates in the gallery (replacing any it had); call after the commit. */
  async put(subjectRef: number, subjectId: string, templates: Uint8Array[]): Promise<void> {
    await this.ready();
    this.gallery.replace(String(subjectRef), templates);
    this.subjectIds.set(subjectRef, subjectId);
  }

  /** Take subjects out of the gallery; call after the commit that deleted or un-enrolled them. */
  async remove(subjectRefs: number[]): Promise<void> {
    await this.ready();
    for (const ref of subjectRefs) {
      this.gallery.remove(String(ref));
      this.subjectIds.delete(ref);
    }
  }

  /** Forget everything; the next use reloads from the database (after bulk deletes and truncation). */
  reset(): void {
    this.generation += 1;
    this.loading = null;
    this.gallery = new Gallery();
    this.subjectIds = new Map();
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
