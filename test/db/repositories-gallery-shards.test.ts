// A matcher shard's SQL over both dialects: the slot the database stores for each subject is the one
// shard-map.ts computes (the two must never disagree: a shard process filters replays by the JavaScript one and
// loads by the SQL one), a shard's keyset pages hold exactly its ENROLLED subjects in (slot, id) order, and the
// digests of a cluster's shards add up to the whole gallery's.
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { galleryDigestInDatabase } from '../../src/db/repositories/gallery.js';
import { enrolledSubjectsInSlots, type ShardCursor } from '../../src/db/repositories/gallery-shards.js';
import type { Database } from '../../src/db/tables.js';
import { SLOTS, slotOf, slotRange } from '../../src/services/gallery/sharded/shard-map.js';
import { dialects } from '../support/databases.js';
import { openMigratedDatabase } from '../support/migrated-database.js';

for (const dialect of dialects) {
  describe(`a matcher shard's SQL on ${dialect}`, () => {
    let db: Kysely<Database>;
    let close: () => Promise<void>;
    // Ids from the sequence, and chosen ones at the edges of int4 (the hash's largest products).
    const chosen = [2_147_483_647, 2_147_483_646, 1_000_000_007, 65_536, 32_768];

    beforeAll(async () => {
      ({ db, close } = await openMigratedDatabase(dialect));
      await sql`insert into subjects (subject_id, status)
        select 'g-' || g, case when g % 5 = 0 then 'REJECTED' else 'ENROLLED' end from generate_series(1, 1500) g`.execute(
        db,
      );
      for (const id of chosen)
        await sql`insert into subjects (id, subject_id, status) values (${id}, ${`c-${id}`}, 'ENROLLED')`.execute(db);
      await sql`insert into face_samples (subject_ref, operation_uuid, rectangle, template_version, template)
        select id, gen_random_uuid(), '{}'::jsonb, 'v', decode(lpad(to_hex(id), 8, '0'), 'hex') from subjects`.execute(
        db,
      );
    });
    afterAll(async () => close?.());

    it('stores for every subject the slot shard-map.ts computes from its id', async () => {
      const rows = await db.selectFrom('subjects').select(['id', 'shard_slot']).execute();
      expect(rows).toHaveLength(1500 + chosen.length);
      const wrong = rows.filter((r) => Number(r.shard_slot) !== slotOf(r.id));
      expect(wrong).toEqual([]);
      for (const r of rows) expect(Number(r.shard_slot)).toBeLessThan(SLOTS);
    });

    it("pages a shard's ENROLLED subjects in (slot, id) order, each once, none of another shard's", async () => {
      const all = await db.selectFrom('subjects').select(['id', 'status']).execute();
      for (const shards of [1, 3]) {
        for (let shard = 0; shard < shards; shard++) {
          const range = slotRange(shard, shards);
          const seen: ShardCursor[] = [];
          let after: ShardCursor | null = null;
          for (;;) {
            const page = await enrolledSubjectsInSlots(db, range, after, 97);
            seen.push(...page);
            if (page.length < 97) break;
            after = page[page.length - 1]!;
          }
          const expected = all
            .filter((r) => r.status === 'ENROLLED')
            .map((r) => ({ slot: slotOf(r.id), subjectRef: r.id }))
            .filter((c) => c.slot >= range.from && c.slot < range.to)
            .sort((a, b) => a.slot - b.slot || a.subjectRef - b.subjectRef);
          expect(seen).toEqual(expected);
        }
      }
    });

    it("adds the shards' digests up to the whole gallery's", async () => {
      const whole = await galleryDigestInDatabase(db);
      const parts = await Promise.all([0, 1, 2].map((s) => galleryDigestInDatabase(db, slotRange(s, 3))));
      expect(parts.reduce((n, p) => n + p.templates, 0)).toBe(whole.templates);
      expect(parts.reduce((n, p) => n + BigInt(p.sum), 0n).toString()).toBe(whole.sum);
      expect(whole.templates).toBe(1200 + chosen.length);
    });
  });
}
