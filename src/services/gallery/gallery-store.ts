import { Gallery } from '../../biometrics/gallery.js';
import { type MatchCandidate, type MatcherThreads } from '../../biometrics/matcher-types.js';
import { exactTopK } from '../../biometrics/candidate-order.js';
import {
  galleryFaceTemplatesAfter,
  galleryTemplatesOf,
  galleryVoiceTemplatesAfter,
  type GalleryTemplate,
} from '../../db/repositories/gallery.js';
import { enrolledSubjectsInSlots } from '../../db/repositories/gallery-shards.js';
import type { Queryable } from '../../db/repositories/queryable.js';
import { digestTerm, type GalleryDigest } from './digest.js';
import type { SlotRange } from './sharded/shard-map.js';

/** A match with the client's subject identifier attached. */
export interface GalleryMatch extends MatchCandidate {
  /** subjects.id, the gallery key. */
  subjectRef: number;
  subjectId: string;
}

/** What the store holds of one subject, beside its templates in the matcher. */
interface Member {
  subjectId: string;
  templates: number;
  /** The sum of its templates' digest terms (digest.ts). */
  digest: bigint;
}

/** Templates read per query while loading. */
const LOAD_BATCH = 2000;

/**
 * What one node holds of the gallery at one moment: the matcher's partitions (keyed by subjects.id) and, per
 * subject, its client identifier and its share of the digest. A plain in-memory structure: when it is loaded,
 * changed or replaced is the sync protocol's business (gallery-sync.ts).
 */
export class GalleryStore {
  private readonly gallery: Gallery;
  private readonly members = new Map<number, Member>();

  constructor(threads?: MatcherThreads) {
    this.gallery = new Gallery({ threads });
  }

  /**
   * A store holding every gallery template the database has (face sample templates, then VOICE templates, of
   * ENROLLED subjects), read in batches in id order: several queries, each in its own snapshot.
   */
  static async load(db: Queryable, threads?: MatcherThreads, slots?: SlotRange): Promise<GalleryStore> {
    const store = new GalleryStore(threads);
    if (slots) {
      await store.loadSlots(db, slots);
      return store;
    }
    for (const readBatch of [galleryFaceTemplatesAfter, galleryVoiceTemplatesAfter]) {
      let after = 0;
      for (;;) {
        const rows = await readBatch(db, after, LOAD_BATCH);
        for (const row of rows) store.add(row);
        if (rows.length < LOAD_BATCH) break;
        after = rows[rows.length - 1]!.rowId;
      }
    }
    return store;
  }

  /**
   * A matcher shard's part (sharded/shard-map.ts): keyset pages of the ENROLLED subjects of its slots, each page
   * with its subjects' templates. Pages of subjects, not templates, so that a subject's templates never straddle two.
   */
  private async loadSlots(db: Queryable, slots: SlotRange): Promise<void> {
    let after = null;
    for (;;) {
      const subjects = await enrolledSubjectsInSlots(db, slots, after, LOAD_BATCH);
      if (subjects.length === 0) break;
      for (const row of await galleryTemplatesOf(
        db,
        subjects.map((s) => s.subjectRef),
      ))
        this.add(row);
      if (subjects.length < LOAD_BATCH) break;
      after = subjects[subjects.length - 1]!;
    }
  }

  private add(row: GalleryTemplate): void {
    this.gallery.add(String(row.subjectRef), row.template);
    this.addMember(row);
  }

  private addMember(row: GalleryTemplate): void {
    const member = this.members.get(row.subjectRef) ?? { subjectId: row.subjectId, templates: 0, digest: 0n };
    member.templates += 1;
    member.digest += digestTerm(row.source, row.rowId, row.subjectRef, row.template);
    this.members.set(row.subjectRef, member);
  }

  /** Make these subjects' entries what `rows` say: a subject without rows leaves the gallery. */
  refresh(refs: number[], rows: GalleryTemplate[]): void {
    const bySubject = new Map<number, GalleryTemplate[]>();
    for (const row of rows) bySubject.set(row.subjectRef, [...(bySubject.get(row.subjectRef) ?? []), row]);
    for (const ref of refs) {
      const templates = bySubject.get(ref);
      this.members.delete(ref);
      if (!templates) {
        this.gallery.remove(String(ref));
        continue;
      }
      this.gallery.replace(
        String(ref),
        templates.map((t) => t.template),
      );
      for (const row of templates) this.addMember(row);
    }
  }

  /**
   * Benchmarks only: templates that no database row backs (to measure matching over a large gallery without
   * writing it). They add nothing to the digest, so the next reconciliation finds them and reloads without them.
   */
  putUnrecorded(subjectRef: number, subjectId: string, templates: Uint8Array[]): void {
    this.gallery.replace(String(subjectRef), templates);
    this.members.set(subjectRef, { subjectId, templates: templates.length, digest: 0n });
  }

  /** The digest of what this store holds (digest.ts). */
  digest(): GalleryDigest {
    let templates = 0;
    let sum = 0n;
    for (const member of this.members.values()) {
      templates += member.templates;
      sum += member.digest;
    }
    return { templates, sum: sum.toString() };
  }

  /** Number of subjects. */
  get subjects(): number {
    return this.members.size;
  }

  /** Subjects and templates per template version. */
  partitions(): Record<string, { subjects: number; templates: number }> {
    const versions: Record<string, { subjects: number; templates: number }> = {};
    for (const v of this.gallery.versions()) {
      const p = this.gallery.partition(v);
      versions[v] = { subjects: p.subjects, templates: p.size };
    }
    return versions;
  }

  /**
   * 1:N: best `topK` subjects at or above `threshold` for one probe template, best first, split across the
   * matcher threads when there are some and the partition is large. Unnamed: name them with {@link named} of
   * the store current when the search ends (a subject removed meanwhile is then dropped).
   */
  search(
    probe: Uint8Array,
    options: { topK: number; threshold: number; excludeRefs?: number[] },
  ): Promise<MatchCandidate[]> {
    const exclude = new Set((options.excludeRefs ?? []).map(String));
    // Equal scores in subject order, not row order: the same list whether one process holds the gallery or a
    // cluster's shards each hold a part (biometrics/candidate-order.ts).
    return exactTopK((opts) => this.gallery.identifyAsync(probe, opts), {
      topK: options.topK,
      threshold: options.threshold,
      exclude,
    });
  }

  /** 1:1: the probe against one subject's best template; null when the subject has no templates of the probe's version. */
  verify(probe: Uint8Array, subjectRef: number): GalleryMatch | null {
    const match = this.gallery.verify(probe, String(subjectRef));
    return match ? this.named(match) : null;
  }

  /** The match with its subject's identifier, or null when the subject is not (or no longer) a member. */
  named(m: MatchCandidate): GalleryMatch | null {
    const subjectRef = Number(m.subject);
    const member = this.members.get(subjectRef);
    return member === undefined ? null : { ...m, subjectRef, subjectId: member.subjectId };
  }
}
