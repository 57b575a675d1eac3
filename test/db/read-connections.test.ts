// PostgreSQL: the subject reads run outside transactions on read connections of their own whose sessions plan
// every prepared statement once, generically (src/db/read-connections.ts): their statements show only generic
// plans in `pg_prepared_statements` however often they run, and every other statement keeps the server's default
// (with `plan_cache_mode = auto` the same reads were planned anew on every execution: 0 generic plans in 2,000).
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/tables.js';
import { readConnectionsOf } from '../../src/db/read-connections.js';
import { listSubjects, subjectText } from '../../src/services/subjects/queries.js';
import type { ServiceContext } from '../../src/services/context.js';
import { bootForTest, dialects } from '../support/databases.js';
import { seedSubject } from '../support/subject-rows.js';

const setting = async (db: Kysely<Database>) =>
  (await sql<{ mode: string }>`select current_setting('plan_cache_mode') as mode`.execute(db)).rows[0]!.mode;

describe.skipIf(!dialects.includes('postgres'))('the subject reads on PostgreSQL', () => {
  let booted: Awaited<ReturnType<typeof bootForTest>>;
  let ctx: ServiceContext;
  let db: Kysely<Database>;
  beforeAll(async () => {
    booted = await bootForTest('postgres');
    ctx = booted.services.ctx;
    db = ctx.db;
    for (const n of [1, 2, 3]) await seedSubject(db, { subjectId: `rc_${n}`, faces: [80] });
  });
  afterAll(async () => {
    await booted?.close();
  });

  it('run on connections of their own that plan generically; other statements keep the default', async () => {
    const reads = readConnectionsOf(db);
    expect(reads).not.toBe(db);
    expect(await setting(reads)).toBe('force_generic_plan');
    expect(await setting(db)).not.toBe('force_generic_plan');
    expect(await db.transaction().execute((trx) => setting(trx))).not.toBe('force_generic_plan');
  });

  it('plan each statement once, never for its values, however often it runs', async () => {
    // One read at a time: the read connections' pool hands out its one idle connection each time.
    for (let i = 0; i < 12; i++) {
      const subjectId = `rc_${(i % 3) + 1}`;
      expect(JSON.parse((await subjectText(ctx, { subjectId }, 'subject')).text).subjectId).toBe(subjectId);
      expect((await listSubjects(ctx, { page: 0, size: 2 })).map((s) => s.subjectId)).toEqual(['rc_1', 'rc_2']);
    }
    const { rows } = await sql<{ name: string; generic: number; custom: number }>`
      select name, generic_plans as generic, custom_plans as custom from pg_prepared_statements
      where name like 'bims_subjects_%' order by name`.execute(readConnectionsOf(db));
    // The read by subjectId and the page: two statements, each executed 12 times, never planned for its values.
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatchObject({ generic: 12, custom: 0 });
  });
});
