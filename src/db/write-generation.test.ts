import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompiledQuery, sql } from 'kysely';
import { PGlite } from '@electric-sql/pglite';
import { connectDatabase, type DatabaseHandle } from './connect.js';
import { migratedPgliteImage } from '../../test/support/pglite-image.js';
import {
  pureRead,
  trackWrites,
  writeGenerationOf,
  type TrackedClient,
  type WriteGeneration,
} from './write-generation.js';

/**
 * The write generation must move with every statement that is not a registered pure read, before it is sent
 * (so a read running meanwhile is never remembered) and after; registered reads leave it where it is.
 */

/** Run `action` and answer whether the generation moved, and whether it was quiet (nothing under way) after. */
async function moves(writes: WriteGeneration, action: () => Promise<unknown>) {
  const before = writes.quiet;
  expect(before).toBeDefined();
  await action();
  return writes.quiet !== before;
}

describe('write generation through the database handle (Kysely over PGlite)', () => {
  let handle: DatabaseHandle;
  let writes: WriteGeneration;
  const registered = pureRead(CompiledQuery.raw('select id, note from wg_notes where id = $1', [1]));

  beforeAll(async () => {
    handle = await connectDatabase({ dataDir: 'memory://', loadDataDir: await migratedPgliteImage() });
    writes = handle.writes!;
    await sql`create table wg_notes (id int primary key, note text)`.execute(handle.db);
  });
  afterAll(async () => {
    await handle.close();
  });

  it('is there on PGlite, and found by the Kysely instance', () => {
    expect(writes).toBeDefined();
    expect(writeGenerationOf(handle.db)).toBe(writes);
  });

  it.each([
    ['insert', () => sql`insert into wg_notes values (1, 'a')`],
    ['update', () => sql`update wg_notes set note = 'b' where id = 1`],
    ['delete', () => sql`delete from wg_notes where id = 2`],
    ['ddl', () => sql`create index if not exists wg_notes_note on wg_notes (note)`],
    ['a select that is not registered', () => sql`select note from wg_notes where id = ${1}`],
    ['a function call in a select', () => sql`select nextval('subject_revisions_missing_is_fine') as n`],
  ])('%s moves it', async (_, statement) => {
    expect(
      await moves(writes, () =>
        statement()
          .execute(handle.db)
          .catch(() => undefined),
      ),
    ).toBe(true);
  });

  it('a registered pure read does not move it and still sends its statement', async () => {
    const sent = writes.statements;
    expect(await moves(writes, () => handle.db.executeQuery(registered))).toBe(false);
    expect(writes.statements).toBe(sent + 1);
  });

  it('the same text with other values is still the registered read; other text is not', async () => {
    expect(await moves(writes, () => handle.db.executeQuery(CompiledQuery.raw(registered.sql, [2])))).toBe(false);
    expect(await moves(writes, () => handle.db.executeQuery(CompiledQuery.raw(`${registered.sql} `, [2])))).toBe(true);
  });

  it('a Kysely transaction moves it at begin, at each statement and at commit, and at rollback', async () => {
    const seen: (number | undefined)[] = [];
    await handle.db.transaction().execute(async (trx) => {
      seen.push(writes.quiet);
      await trx.executeQuery(registered);
      seen.push(writes.quiet);
      await sql`insert into wg_notes values (3, 'c')`.execute(trx);
      seen.push(writes.quiet);
    });
    seen.push(writes.quiet);
    // begin moved it; the registered read inside did not; the insert did; commit did.
    expect(seen[1]).toBe(seen[0]);
    expect(seen[2]).not.toBe(seen[1]);
    expect(seen[3]).not.toBe(seen[2]);
    const before = writes.quiet;
    await expect(
      handle.db.transaction().execute(async (trx) => {
        await trx.executeQuery(registered);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    // begin and rollback, with only a registered read between them.
    expect(writes.quiet).not.toBe(before);
  });

  it('a dump of the data directory moves it', async () => {
    expect(await moves(writes, () => handle.dumpDataDir!())).toBe(true);
  });

  it('a write in flight makes it not quiet from the moment it is sent until it is answered', async () => {
    const pending = sql`insert into wg_notes values (4, 'd')`.execute(handle.db);
    // Kysely hands the statement to the client after a few turns; poll until it is sent.
    let busy = false;
    for (let i = 0; i < 50 && !busy; i++) {
      await Promise.resolve();
      busy = writes.quiet === undefined;
    }
    expect(busy).toBe(true);
    await pending;
    expect(writes.quiet).toBeDefined();
  });
});

describe('write generation on the PGlite client itself (every entry besides query)', () => {
  let client: PGlite;
  let writes: WriteGeneration;
  const read = pureRead({ sql: 'select 1 as one where $1::int = 1' });

  beforeAll(async () => {
    client = await PGlite.create({ loadDataDir: await migratedPgliteImage() });
    writes = trackWrites(client as unknown as TrackedClient);
    await client.exec('create table wg_raw (id int)');
  });
  afterAll(async () => {
    await client.close();
  });

  it.each([
    ['exec', () => client.exec('insert into wg_raw values (1)')],
    ['exec of a select', () => client.exec('select 1')],
    ['sql template', () => client.sql`select * from wg_raw where id = ${1}`],
    ['query of an unregistered select', () => client.query('select * from wg_raw')],
    ['query of begin', () => client.query('begin')],
    ['query of commit', () => client.query('commit')],
    ['PGlite transaction', () => client.transaction(async (tx) => tx.query('insert into wg_raw values (2)'))],
    ['describeQuery', () => client.describeQuery('select * from wg_raw')],
    ['listen', async () => (await client.listen('wg_channel', () => {}))()],
    ['refreshArrayTypes', () => client.refreshArrayTypes()],
    ['dumpDataDir', () => client.dumpDataDir('none')],
  ])('%s moves it', async (_, action) => {
    expect(await moves(writes, action)).toBe(true);
  });

  it('a registered read through query does not, and is not quiet-breaking while it runs', async () => {
    expect(await moves(writes, () => client.query(read.sql, [1]))).toBe(false);
    const pending = client.query(read.sql, [1]);
    expect(writes.quiet).toBeDefined();
    await pending;
  });

  it('a transaction under way keeps it unquiet throughout, even across registered reads inside it', async () => {
    let inside: number | undefined = 0;
    await client.transaction(async (tx) => {
      await tx.query(read.sql, [1]);
      inside = writes.quiet;
    });
    expect(inside).toBeUndefined();
  });

  it('a write sent right after a registered read leaves the read unable to be remembered', async () => {
    const before = writes.quiet;
    const reading = client.query(read.sql, [1]);
    const writing = client.query('insert into wg_raw values (5)');
    await reading;
    expect(writes.quiet).not.toBe(before);
    await writing;
  });
});
