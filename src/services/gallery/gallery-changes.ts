import type { Transaction } from 'kysely';
import { notifyGalleryChannel, type GalleryTemplate } from '../../db/repositories/gallery.js';
import type { Database } from '../../db/tables.js';
import { recordChange } from './change-log.js';

/** The PostgreSQL channel on which nodes tell each other that the gallery changed. */
export const GALLERY_CHANNEL = 'bims_gallery';

/** What a NOTIFY says: who changed the gallery. The change itself is read from the change log. */
export interface GalleryNotice {
  node: string;
}

type Change =
  | { kind: 'put'; subjectRefs: number[]; templates?: readonly GalleryTemplate[] }
  | { kind: 'remove'; subjectRefs: number[] }
  | { kind: 'reset' };

/**
 * A committed transaction's gallery changes as this node can apply them without reading them back: the change
 * log's id before its first row and of its last row, and each change's subjects with the gallery templates they
 * hold at the commit (none for a removal).
 */
export interface CommittedChanges {
  previous: number;
  last: number;
  steps: { refs: number[]; templates: readonly GalleryTemplate[] }[];
}

/**
 * The gallery changes one transaction makes, noted while it runs. A service never writes them itself: the
 * gallery's {@link GalleryCache.transaction} hands it one of these, announces what it holds as the last
 * statements of the transaction, and applies it to this node's gallery after the commit, so no call site can
 * announce without applying or apply without announcing.
 *
 * @example
 * await services.gallery.transaction(async (trx, changes) => {
 *   const subject = await insertSubject(trx, ...);
 *   changes.put(subject.id);
 * });
 */
export class GalleryChanges {
  private readonly noted: Change[] = [];
  /** Where announce() wrote the changes: the id before the first row, and the last row's id. */
  private logged: { previous: number; last: number } | null = null;

  /**
   * The subject joins the gallery, or its templates changed. `templates`, when the transaction knows them: the
   * subject's gallery templates exactly as they stand at the commit (each face sample template, then its VOICE
   * template, in row id order, the subject ENROLLED), so this node applies the change without reading it back.
   */
  put(subjectRef: number, templates?: readonly GalleryTemplate[]): void {
    this.noted.push({ kind: 'put', subjectRefs: [subjectRef], ...(templates ? { templates: [...templates] } : {}) });
  }

  /** These subjects leave the gallery. */
  remove(subjectRefs: readonly number[]): void {
    if (subjectRefs.length) this.noted.push({ kind: 'remove', subjectRefs: [...subjectRefs] });
  }

  /** Every node reloads its gallery (a clear: cheaper than removing subjects one by one). */
  reset(): void {
    this.noted.push({ kind: 'reset' });
  }

  /** Nothing noted: the transaction left the gallery as it was. */
  get empty(): boolean {
    return this.noted.length === 0;
  }

  /**
   * Write the noted changes to the change log and, on PostgreSQL, NOTIFY the listening nodes; inside the
   * transaction, last (the change log's lock is then held only for the tail of the transaction). The rows
   * commit with the transaction, so a process killed right after its commit cannot leave the other nodes
   * without a change it stored, and the NOTIFY is delivered only at the commit. A reset makes every other
   * change of the same transaction moot, so it is written alone.
   */
  async announce(trx: Transaction<Database>, from: { dialect: string; nodeId: string }): Promise<void> {
    if (this.empty) return;
    const changes = this.noted.some((c) => c.kind === 'reset') ? [{ kind: 'reset' as const }] : this.noted;
    for (const change of changes) {
      const row = await recordChange(trx, change.kind, change.kind === 'reset' ? [] : change.subjectRefs);
      this.logged = { previous: this.logged?.previous ?? row.previous, last: row.id };
    }
    // No NOTIFY on PGlite: it is one process, which applies its own changes after each commit.
    if (from.dialect !== 'postgres') return;
    const notice: GalleryNotice = { node: from.nodeId };
    await notifyGalleryChannel(trx, GALLERY_CHANNEL, JSON.stringify(notice));
  }

  /**
   * After the commit: the changes as this node can apply them itself, or null when one of them must be read
   * back from the database (a reset, or a put whose templates the transaction did not give).
   */
  committed(): CommittedChanges | null {
    if (!this.logged) return null;
    const steps: CommittedChanges['steps'] = [];
    for (const change of this.noted) {
      if (change.kind === 'reset') return null;
      if (change.kind === 'remove') steps.push({ refs: change.subjectRefs, templates: [] });
      else if (change.templates) steps.push({ refs: change.subjectRefs, templates: change.templates });
      else return null;
    }
    return { ...this.logged, steps };
  }
}
