import {
  appendGalleryChange,
  pruneGalleryChanges,
  type AppendedChange,
  type GalleryChangeKind,
  type GalleryChangeRow,
} from '../../db/repositories/gallery.js';
import type { Queryable } from '../../db/repositories/queryable.js';

/**
 * The gallery change log (table `gallery_changes`): how a node that cannot LISTEN (Cloudflare Workers) learns
 * what other nodes changed, and how a listening node catches up after losing its connection. Rows are written
 * inside the transaction that changes the gallery, so a change is logged if and only if it commits.
 */

type ChangeKind = GalleryChangeKind;

/** One row of the log: its id, its kind and the subjects it names. */
export type LoggedChange = GalleryChangeRow;

/** How long rows are kept; a node that has not caught up for longer reloads its whole gallery. */
const CHANGE_RETENTION_MS = 7 * 24 * 3600 * 1000;

/**
 * Append a change inside the changing transaction (call it last, just before the commit).
 *
 * Readers ask for "every row after the highest id I have applied", which is only sound if ids become visible
 * in id order. A bigserial alone does not give that: a transaction can draw id 10, another id 11 and commit
 * first, and a reader that sees 11 and remembers it would never see 10. So writers take a lock that conflicts
 * with itself (SHARE ROW EXCLUSIVE; plain reads are not blocked) before drawing the id and keep it until
 * their commit: the next writer draws its id only after the previous one is visible, and a reader that sees
 * id n sees every committed id below n. The lock serialises only the tail of gallery-changing transactions
 * (one insert and the commit). Answers the row's id and the highest id committed before it.
 */
export async function recordChange(
  trx: Queryable,
  kind: Exclude<ChangeKind, 'pruned'>,
  subjectRefs: number[] = [],
): Promise<AppendedChange> {
  return appendGalleryChange(trx, kind, subjectRefs);
}

// Reading the log: latestGalleryChangeId and galleryChangesAfter in src/db/repositories/gallery.ts.

/**
 * Drop the rows older than `retentionMs` (by the database clock). The newest of them is not deleted but turned
 * into a `pruned` marker: every row before it is gone, so a node whose last applied id is below the marker
 * reads the marker as its next change and reloads, while a node already past it never sees it. Concurrent
 * prunes are harmless (at worst two markers). Returns the number of rows deleted.
 */
export async function pruneChanges(db: Queryable, retentionMs: number = CHANGE_RETENTION_MS): Promise<number> {
  return pruneGalleryChanges(db, retentionMs);
}
