// Sample bytes go into bytea columns and come back unchanged on both dialects (PGlite binds them in
// PostgreSQL's binary format; node-postgres sends them as it does).
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { dialects } from '../support/databases.js';
import { openMigratedDatabase } from '../support/migrated-database.js';

for (const dialect of dialects) {
  describe(`bytea on ${dialect}`, () => {
    let database: Awaited<ReturnType<typeof openMigratedDatabase>> | undefined;
    afterAll(async () => {
      // The table dropped, a lent PGlite's schema is the image's again, and the pool lends it on (pglite-pool.ts).
      if (!database) return;
      await sql`drop table if exists blobs`.execute(database.db).catch(() => {});
      await database.close();
    });

    it('stores every byte value, an empty value and a large one, and reads them back exactly', async () => {
      // A migrated database, not an empty one: an empty PGlite costs initdb (~3.5 CPU-s), a lent migrated one nothing.
      database = await openMigratedDatabase(dialect);
      const db = database.db;
      await sql`create table blobs (id integer primary key, b bytea not null)`.execute(db);
      let seed = 1;
      const values = [
        Uint8Array.from({ length: 256 }, (_, i) => i),
        new Uint8Array(0),
        Uint8Array.from({ length: 300_000 }, () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 255),
        new TextEncoder().encode("\\x00'; drop table blobs; --"), // bytes that look like hex text or SQL stay bytes
      ];
      for (const [id, b] of values.entries()) await sql`insert into blobs (id, b) values (${id}, ${b})`.execute(db);
      const rows = await sql<{
        id: number;
        b: Uint8Array;
        n: number;
      }>`select id, b, octet_length(b) as n from blobs order by id`.execute(db);
      expect(rows.rows.map((r) => Number(r.n))).toEqual(values.map((v) => v.length));
      for (const r of rows.rows) expect(Buffer.from(r.b).equals(Buffer.from(values[r.id]!)), `row ${r.id}`).toBe(true);
    });
  });
}
