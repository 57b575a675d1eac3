import { sql, type Kysely } from 'kysely';

/**
 * `subjects.shard_slot`: which of 32,768 slots a subject belongs to, the key a matcher cluster splits the gallery
 * by (src/services/gallery/sharded/shard-map.ts, docs/scale-out.md). The top 15 bits of the 32-bit Fibonacci
 * hash of the subject's id, so consecutive ids spread evenly and a subject's slot never changes.
 *
 * A stored generated column: the database computes it for every row, the existing ones included (the ALTER
 * rewrites the table once), and no statement can write a different value, so a shard process and an API node
 * cannot disagree with it. shard-map.ts's `slotOf` is the same arithmetic in JavaScript (a test holds the two
 * equal). The index serves a shard's load: the ENROLLED subjects of a slot range, in (slot, id) order.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table subjects add column shard_slot smallint
    generated always as ((((id::int8 * 2654435761) & 4294967295) >> 17)::smallint) stored`.execute(db);
  await sql`create index subjects_shard_slot on subjects (shard_slot, id) where status = 'ENROLLED'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists subjects_shard_slot`.execute(db);
  await sql`alter table subjects drop column if exists shard_slot`.execute(db);
}
