// Which shard of a matcher cluster holds a subject. Every subject row carries a slot, a 15-bit hash of its id
// that the database computes when the row is inserted (`subjects.shard_slot`, migration 2026_11_28_0012); a
// cluster of S shards gives shard s the slots [s * 32768 / S, (s + 1) * 32768 / S), rounded up at both ends.
// All of a subject's templates therefore live in one shard, so each shard's best score for a subject is the
// global one and a merge of the shards' lists is exact. A slot never changes, so a cluster that grows from S to
// 2 S shards moves no row: shard s splits into shards 2 s and 2 s + 1, each exactly one half of its slots.

/** How many slots the hash has (15 bits: a smallint column). */
export const SLOTS = 32768;

/** The largest shard count (one slot per shard). */
const MAX_SHARDS = SLOTS;

/** A shard's slots: from <= slot < to. */
export interface SlotRange {
  from: number;
  to: number;
}

/**
 * The slot of a subject: the top 15 bits of the 32-bit Fibonacci hash of its id (id x 2654435761 mod 2^32),
 * which spreads consecutive ids evenly over the slots. The migration computes the same in SQL:
 * `((id::int8 * 2654435761) & 4294967295) >> 17`.
 */
export function slotOf(subjectRef: number): number {
  return Math.imul(subjectRef, 0x9e3779b1) >>> 17;
}

/** The shard that holds a slot in a cluster of `shards` shards. */
export function shardOfSlot(slot: number, shards: number): number {
  return Math.floor((slot * shards) / SLOTS);
}

/** The shard that holds a subject in a cluster of `shards` shards. */
export function shardOf(subjectRef: number, shards: number): number {
  return shardOfSlot(slotOf(subjectRef), shards);
}

/** The slots of shard `shard` of `shards`. */
export function slotRange(shard: number, shards: number): SlotRange {
  if (!Number.isInteger(shards) || shards < 1 || shards > MAX_SHARDS)
    throw new RangeError(`a cluster has 1 to ${MAX_SHARDS} shards, not ${shards}`);
  if (!Number.isInteger(shard) || shard < 0 || shard >= shards)
    throw new RangeError(`shard ${shard} is not one of 0..${shards - 1}`);
  return { from: Math.ceil((shard * SLOTS) / shards), to: Math.ceil(((shard + 1) * SLOTS) / shards) };
}

/** True when the subject's slot is in the range. */
export function holds(range: SlotRange, subjectRef: number): boolean {
  const slot = slotOf(subjectRef);
  return slot >= range.from && slot < range.to;
}
