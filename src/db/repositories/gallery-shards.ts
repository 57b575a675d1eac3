import { sql } from 'kysely';
import type { Queryable } from './queryable.js';

/**
 * The SQL of one shard of a matcher cluster (services/gallery/sharded/): the ENROLLED subjects of a slot range
 * (`subjects.shard_slot`, migration 2026_11_28_0012), read in keyset pages for a shard's load. Their templates
 * are read by gallery.ts's `galleryTemplatesOf`, and the shard's digest by `galleryDigestInDatabase` with the range.
 */

/** Where a page of a shard's subjects ends: the next page starts after it. */
export interface ShardCursor {
  slot: number;
  subjectRef: number;
}

/**
 * Up to `limit` ENROLLED subjects with from <= shard_slot < to after `after`, in (slot, id) order: one range
 * scan of the partial index `subjects_shard_slot`, however large the rest of the gallery is.
 */
export async function enrolledSubjectsInSlots(
  db: Queryable,
  slots: { from: number; to: number },
  after: ShardCursor | null,
  limit: number,
): Promise<ShardCursor[]> {
  const start = after ?? { slot: slots.from, subjectRef: 0 };
  const rows = await db
    .selectFrom('subjects')
    .select(['id', 'shard_slot'])
    .where('status', '=', 'ENROLLED')
    .where(sql<boolean>`(shard_slot, id) > (${start.slot}::smallint, ${start.subjectRef}::int)`)
    // ::int: the end of the last range (32768) is past smallint, the type a bare parameter would take here.
    .where(sql<boolean>`shard_slot >= ${slots.from}::int and shard_slot < ${slots.to}::int`)
    .orderBy('shard_slot')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ slot: Number(r.shard_slot), subjectRef: Number(r.id) }));
}
