import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { adminAuth, bootForTest, freshPostgres, ADMIN_PASSWORD } from '../support/databases.js';
import { startService, type ServiceProcess } from '../support/service-process.js';
import { NO_DASHBOARD, sharedExtraction } from '../support/shared-extraction.js';
import { seedSubject } from '../support/subject-rows.js';
import { connectDatabase } from '../../src/db/connect.js';
import { json } from '../../src/db/json.js';
import type { Database } from '../../src/db/tables.js';

/**
 * Identical reads arriving together share one statement (src/db/joined-reads.ts), but never one sent before they
 * arrived: a read must show every change committed before it was asked. Readers keep asking for the same subject
 * and the same page, all with one token (so their statements are identical and do get shared), while a writer on
 * another connection commits a counter into the subject's metadata again and again. Each answer must show at
 * least the last counter whose commit had returned when that read was sent; answers that show less are counted.
 * On PostgreSQL the case a wrong join gets wrong is also made on purpose, many times ({@link overlapping}): a join of
 * the statement under way fails every one of those trials (tried).
 */

const WRITES = 150;
const READERS = 12;

type Get = (path: string) => Promise<{ status: number; text: string }>;

/** Readers and a writer at once (see above); fails on any stale or failed answer. */
async function race(db: Kysely<Database>, get: Get, tag: string) {
  const prefix = `jr-${tag}-`;
  const a = await seedSubject(db, { subjectId: `${prefix}a`, faces: [80], metadata: { n: 0 } });
  const b = await seedSubject(db, { subjectId: `${prefix}b, "2" \\ {NULL}`, faces: [70], metadata: { n: 0 } });
  // Each path with the subject whose counter it shows: the same subject and other subjects by the same kind of
  // read, so that statements are shared by identical reads and by reads of different subjects.
  const paths: [string, string][] = [
    [`/admin/subjects/${encodeURIComponent(a.subjectId)}`, a.subjectId],
    [`/admin/subjects/${encodeURIComponent(b.subjectId)}`, b.subjectId],
    [`/admin/subjects/id/${a.id}`, a.subjectId],
    [`/admin/subjects/id/${b.id}`, b.subjectId],
    [`/admin/subjects?subjectId=${encodeURIComponent(prefix)}&page=0&size=5`, a.subjectId],
  ];
  const counterOf = (text: string, subjectId: string): number => {
    const body = JSON.parse(text) as
      | { metadata: { n: number }; subjectId: string }
      | { metadata: { n: number }; subjectId: string }[];
    const mine = Array.isArray(body) ? body.find((s) => s.subjectId === subjectId) : body;
    if (mine?.subjectId !== subjectId) throw new Error(`${subjectId} was answered with ${text.slice(0, 200)}`);
    return mine.metadata.n;
  };
  // committed[n]: when the writer's commit of counter n had returned.
  const committed: number[] = [0];
  const reads: { path: string; sent: number; saw: number }[] = [];
  const failures: string[] = [];
  let writing = true;
  const reader = async (r: number) => {
    for (let i = r; writing; i++) {
      const [path, subjectId] = paths[i % paths.length]!;
      const sent = performance.now();
      const answer = await get(path);
      if (answer.status !== 200) failures.push(`${path} answered ${answer.status} ${answer.text.slice(0, 200)}`);
      else reads.push({ path, sent, saw: counterOf(answer.text, subjectId) });
      // Readers apart in time, so that some arrive while a statement is under way (and the writer gets its turns:
      // an answer from memory on PGlite comes back without a turn of the event loop).
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
    }
  };
  const writer = async () => {
    try {
      for (let n = 1; n <= WRITES; n++) {
        await db
          .updateTable('subjects')
          .set({ metadata: json({ n }) })
          .where('id', 'in', [a.id, b.id])
          .execute();
        committed.push(performance.now());
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 4));
      }
    } finally {
      writing = false;
    }
  };
  await Promise.all([writer(), ...Array.from({ length: READERS }, (_, r) => reader(r))]);
  const stale = reads.filter((read) => {
    let due = 0;
    while (due + 1 < committed.length && committed[due + 1]! <= read.sent) due++;
    return read.saw < due;
  });
  expect(failures).toEqual([]);
  expect(reads.length).toBeGreaterThan(WRITES);
  expect(stale, `${stale.length} stale answers of ${reads.length}`).toEqual([]);
}

/**
 * The case a wrong join gets wrong, made on purpose `trials` times per kind of read: reader A's statement is under
 * way (building a subject's state, which the test's database makes take 50 ms), a change of both subjects commits
 * meanwhile, and reader B asks after that commit has returned, while A's statement still runs: for the same subject,
 * or for the other one by the same kind of read (reads of different subjects share statements too). B must show the
 * change. The subjects' names are ones a careless array literal would split or misread.
 */
async function overlapping(db: Kysely<Database>, get: Get, tag: string, trials: number) {
  const names = [`jr-${tag}-o1, "q" \\ {b}`, 'NULL'];
  const subjects = await Promise.all(
    names.map((subjectId) => seedSubject(db, { subjectId, faces: [80], metadata: { n: 0 } })),
  );
  const bySubjectId = (i: number) => `/admin/subjects/${encodeURIComponent(subjects[i]!.subjectId)}`;
  const byId = (i: number) => `/admin/subjects/id/${subjects[i]!.id}`;
  const page = () => `/admin/subjects?subjectId=${encodeURIComponent(names[0]!)}&page=0&size=5`;
  const pairs: [string, string, number][] = [
    [bySubjectId(0), bySubjectId(0), 0],
    [bySubjectId(0), bySubjectId(1), 1],
    [byId(1), byId(0), 0],
    [page(), page(), 0],
  ];
  const counterOf = (text: string, i: number): number => {
    const body = JSON.parse(text) as
      | { subjectId: string; metadata: { n: number } }
      | { subjectId: string; metadata: { n: number } }[];
    const subject = Array.isArray(body) ? body[0]! : body;
    if (subject.subjectId !== subjects[i]!.subjectId)
      throw new Error(`answered ${subject.subjectId}, not ${subjects[i]!.subjectId}`);
    return subject.metadata.n;
  };
  const write = (n: number) =>
    db
      .updateTable('subjects')
      .set({ metadata: json({ n }) })
      .where(
        'id',
        'in',
        subjects.map((s) => s.id),
      )
      .execute();
  const stale: string[] = [];
  let n = 0;
  for (let trial = 0; trial < trials; trial++) {
    for (const [first, second, whose] of pairs) {
      await write(++n); // A's read will not hold this state: its statement builds it (slowly)
      const a = get(first);
      await new Promise((resolve) => setTimeout(resolve, 10));
      await write(++n);
      const b = await get(second);
      expect((await a).status).toBe(200);
      if (b.status !== 200 || counterOf(b.text, whose) !== n)
        stale.push(
          `trial ${trial} ${second} after ${first}: B answered ${b.status} ${b.text.slice(0, 120)} after ${n} committed`,
        );
    }
  }
  return stale;
}

/** GET over HTTP from a service process, with this Authorization. */
const overHttp =
  (url: string, authorization: string): Get =>
  async (path) => {
    const res = await fetch(`${url}${path}`, { headers: { authorization } });
    return { status: res.status, text: await res.text() };
  };

/** A Bearer token for the admin (one caller, so the readers' statements are identical and can be shared). */
async function bearer(post: (path: string, init: RequestInit) => Promise<Response>): Promise<string> {
  const res = await post('/oauth2/token', {
    method: 'POST',
    headers: { authorization: adminAuth, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
  expect(res.status).toBe(200);
  return `Bearer ${((await res.json()) as { access_token: string }).access_token}`;
}

describe.skipIf(!process.env.DATABASE_URL)('joined reads show every change committed before them (PostgreSQL)', () => {
  let database: Awaited<ReturnType<typeof freshPostgres>>;
  let node: ServiceProcess;
  let handle: Awaited<ReturnType<typeof connectDatabase>>;

  beforeAll(async () => {
    database = await freshPostgres();
    node = startService(
      {
        DATABASE_URL: database.url,
        BIMS_ADMIN_PASSWORD: ADMIN_PASSWORD,
        BIMS_PASSWORD_ITERATIONS: '10000',
        BIMS_EXTRACTION_WORKERS: '1',
        ...sharedExtraction(), // the run's one extraction service when there is one (test/support/shared-extraction.ts)
        ...NO_DASHBOARD,
      },
      { startupMs: 90_000 },
    );
    await node.listening;
    handle = await connectDatabase({ url: database.url });
  }, 120_000);

  afterAll(async () => {
    await handle?.close();
    node?.child.kill('SIGTERM');
    await node?.exited;
    await database?.drop();
  });

  it(`${READERS} readers of one subject and one page while ${WRITES} changes commit elsewhere: no stale answer`, async () => {
    const url = await node.listening;
    const authorization = await bearer((path, init) => fetch(`${url}${path}`, init));
    await race(handle.db, overHttp(url, authorization), 'pg');
  }, 120_000);

  it('a read asked after a change committed never shares a statement under way since before it', async () => {
    const url = await node.listening;
    const authorization = await bearer((path, init) => fetch(`${url}${path}`, init));
    const get = overHttp(url, authorization);
    // Building a subject's state takes 50 ms more in this test: a read under way when a change commits stays under
    // way long enough for later reads to arrive, so a join of that statement would be seen (same answers otherwise).
    await sql`alter function subject_state(subjects) rename to subject_state_unslowed`.execute(handle.db);
    await sql`create function subject_state(s subjects) returns json language plpgsql stable as $$
      begin perform pg_sleep(0.05); return subject_state_unslowed(s); end $$`.execute(handle.db);
    const stale = await overlapping(handle.db, get, 'pg', 10);
    expect(stale, `${stale.length} stale answers of 40`).toEqual([]);
  }, 120_000);
});

describe('joined reads show every change committed before them (PGlite)', () => {
  let booted: Awaited<ReturnType<typeof bootForTest>>;

  beforeAll(async () => {
    booted = await bootForTest('pglite');
  });
  afterAll(async () => {
    await booted?.close();
  });

  it(`${READERS} readers of one subject and one page while ${WRITES} changes commit: no stale answer`, async () => {
    const app = booted.app;
    const authorization = await bearer(async (path, init) => app.request(path, init));
    await race(
      booted.services.ctx.db,
      async (path) => {
        const res = await app.request(path, { headers: { authorization } });
        return { status: res.status, text: await res.text() };
      },
      'pglite',
    );
  }, 120_000);
});
