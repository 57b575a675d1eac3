// The matcher cluster's search, end to end over a real NATS server and PostgreSQL, with the shards in this
// process (the processes, replicas and faults are cluster-faults.test.ts): on one generated gallery, every
// candidate list the cluster merges equals the one the in-process gallery gives; a search sees a change written
// just before it although the shards hear of no NOTIFY, and a shard that answered from before the search's
// change-log position is asked again; a shard without a replica makes the search 503; and the
// NATS service API shows each shard, what it holds and its change-log position.
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { connect, createInbox, Empty, type NatsConnection, type Service } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import type { Database } from '../../src/db/tables.js';
import type { ServiceContext } from '../../src/services/context.js';
import { DomainError } from '../../src/services/errors.js';
import { GalleryCache } from '../../src/services/gallery/gallery-cache.js';
import type { GalleryService } from '../../src/services/gallery/gallery-service.js';
import { MatcherCluster } from '../../src/services/gallery/sharded/matcher-cluster.js';
import { serveShards } from '../../src/services/gallery/sharded/matcher-service.js';
import { MatcherShard } from '../../src/services/gallery/sharded/matcher-shard.js';
import { ShardedGallery } from '../../src/services/gallery/sharded/sharded-gallery.js';
import { shardOf } from '../../src/services/gallery/sharded/shard-map.js';
import { createLogger } from '../../src/logger.js';
import { freshPostgres } from '../support/databases.js';
import {
  faceTemplate,
  generatedEmbedding,
  insertGeneratedGallery,
  randomStream,
  type GeneratedSubject,
} from '../support/generated-gallery.js';
import { startNatsCluster, type TestNatsCluster } from '../support/nats-cluster.js';

const SHARDS = 3;
const SUBJECTS = 3000;
const PROBES = 200;
const PREFIX = 'test';

const describeOnPostgres = process.env.DATABASE_URL ? describe : describe.skip;

describeOnPostgres('a matcher cluster of 3 shards over NATS and PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof freshPostgres>>;
  let db: Kysely<Database>;
  let nats: TestNatsCluster;
  let shardSide: NatsConnection;
  let clientSide: NatsConnection;
  let service: Service;
  let ctx: ServiceContext;
  let subjects: GeneratedSubject[];
  let reference: GalleryCache;
  let sharded: ShardedGallery;
  let shards: MatcherShard[];
  const log = createLogger('silent');

  beforeAll(async () => {
    [database, nats] = await Promise.all([freshPostgres({ migrated: true }), startNatsCluster(1)]);
    db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 4 }) }),
    });
    subjects = await insertGeneratedGallery(db, { count: SUBJECTS, seed: 35 });
    ctx = {
      db,
      dialect: 'postgres',
      config: loadConfig({ DATABASE_URL: database.url }),
      log,
      now: () => new Date(),
      startedAt: new Date(),
      node: { id: 'test-node', hostname: 'test', runtime: 'test', version: 'test' },
    };
    reference = new GalleryCache(ctx);
    shards = Array.from({ length: SHARDS }, (_, s) => new MatcherShard(ctx, s, SHARDS));
    await Promise.all([reference.ready(), ...shards.map((s) => s.gallery.ready())]);
    [shardSide, clientSide] = await Promise.all([
      connect({ servers: nats.urls, name: 'shards' }),
      connect({ servers: nats.urls, name: 'api' }),
    ]);
    service = await serveShards(shardSide, shards, { prefix: PREFIX, version: '1.0.0', log, host: 'test' });
    sharded = new ShardedGallery(
      ctx,
      new MatcherCluster(clientSide, { shards: SHARDS, prefix: PREFIX, timeoutMs: 5000, log }),
    );
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
    await Promise.all([shardSide?.close(), clientSide?.close()]);
    await nats?.stop();
    await db?.destroy();
    await database?.drop();
  });

  it(`splits the gallery over the shards by slot, every template of a subject in one shard`, async () => {
    const held = await Promise.all(shards.map((s) => s.state()));
    expect(held.reduce((n, s) => n + s.subjects, 0)).toBe(SUBJECTS);
    const templates = subjects.reduce((n, s) => n + s.embeddings.length, 0);
    expect(held.reduce((n, s) => n + s.templates, 0)).toBe(templates);
    // Each shard holds about a third (the slots spread consecutive ids evenly).
    for (const s of held) expect(s.subjects).toBeGreaterThan(SUBJECTS / SHARDS - 150);
    for (const subject of subjects.slice(0, 300)) {
      const home = shardOf(subject.subjectRef, SHARDS);
      const found = await shards[home]!.gallery.verify(faceTemplate(subject.embeddings[0]!), subject.subjectRef);
      expect(found?.subjectId).toBe(subject.subjectId);
    }
  });

  it(`gives, for ${PROBES} random probes, the candidate lists the in-process gallery gives (ties included)`, async () => {
    const next = randomStream(9);
    const pick = (n: number) => Math.floor((next() + 0.5) * n);
    const differences: string[] = [];
    let tiesAtTheCut = 0;
    for (let i = 0; i < PROBES; i++) {
      const subject = subjects[pick(subjects.length)]!;
      // A stored template (equal scores when it is shared), a photo-like variant of one, or a stranger.
      const kind = i % 4;
      const embedding =
        kind === 0 || kind === 3
          ? subjects[(Math.floor(pick(SUBJECTS / 10)) * 10 + 9) % SUBJECTS]!.embeddings[0]!
          : kind === 1
            ? generatedEmbedding(next, subject.embeddings[0]!)
            : generatedEmbedding(next);
      const options = {
        topK: [1, 2, 3, 5, 10, 25][pick(6)]!,
        threshold: [0, 0, 10, 30][pick(4)]!,
        ...(kind === 3 ? { excludeRefs: [subject.subjectRef, subjects[pick(SUBJECTS)]!.subjectRef] } : {}),
      };
      const probe = faceTemplate(embedding);
      const [inProcess, cluster] = await Promise.all([
        reference.identify(probe, options),
        sharded.identify(probe, options),
      ]);
      if (!isDeepStrictEqual(cluster, inProcess))
        differences.push(
          `probe ${i} ${JSON.stringify(options)}: ${JSON.stringify({ inProcess, cluster }).slice(0, 400)}`,
        );
      const wider = await reference.identify(probe, { ...options, topK: options.topK + 1 });
      if (wider.length > options.topK && wider[options.topK]!.cosine === wider[options.topK - 1]!.cosine)
        tiesAtTheCut++;
    }
    expect(differences.slice(0, 5), `${differences.length} of ${PROBES} lists differ`).toEqual([]);
    // The probes did meet equal scores across the cut, which only the shared tie-break gets right.
    expect(tiesAtTheCut).toBeGreaterThan(10);
  });

  it('verifies 1:1 on the shard that holds the subject, as the in-process gallery does', async () => {
    for (const subject of subjects.slice(0, 40)) {
      const probe = faceTemplate(generatedEmbedding(randomStream(subject.subjectRef), subject.embeddings[0]!));
      expect(await sharded.verify(probe, subject.subjectRef)).toEqual(
        await reference.verify(probe, subject.subjectRef),
      );
    }
    expect(await sharded.verify(faceTemplate(subjects[0]!.embeddings[0]!), 987_654)).toBeNull();
  });

  it('finds a change committed just before the search, with no NOTIFY reaching the shards', async () => {
    // These shards do not LISTEN: only the change id each request carries brings them up to date.
    const embedding = generatedEmbedding(randomStream(4242));
    const probe = faceTemplate(embedding);
    for (let trial = 0; trial < 10; trial++) {
      const ref = await enrol(sharded, `fresh-${trial}`, probe);
      const found = await sharded.identify(probe, { topK: 1, threshold: 0 });
      expect(found[0]?.subjectId).toBe(`fresh-${trial}`);
      await remove(sharded, ref);
      expect((await sharded.identify(probe, { topK: 1, threshold: 0 }))[0]?.subjectId).not.toBe(`fresh-${trial}`);
    }
  });

  it('asks a shard again when it answered from before the position read with the search, never using that answer', async () => {
    // Written through another gallery's unit of work (another node's), so this node's floor does not hold the
    // change and no NOTIFY reaches the shards: each answers its first request from before it, and only the
    // change-log position read while the probe travelled shows that the answer is stale.
    const probe = faceTemplate(generatedEmbedding(randomStream(3535)));
    const wrong: string[] = [];
    const reasked: number[][] = [];
    for (let trial = 0; trial < 10; trial++) {
      const subjectId = `elsewhere-${trial}`;
      const ref = await enrol(reference, subjectId, probe);
      const counts = [sharded.cluster.stale];
      const found = await sharded.identify(probe, { topK: 1, threshold: 0 });
      if (found[0]?.subjectId !== subjectId) wrong.push(`trial ${trial}: found ${found[0]?.subjectId}`);
      counts.push(sharded.cluster.stale);
      // The shards are at the position now: a 1:1 is answered at the first request.
      if ((await sharded.verify(probe, ref))?.subjectId !== subjectId) wrong.push(`trial ${trial}: not verified`);
      counts.push(sharded.cluster.stale);
      await remove(reference, ref);
      const after = await sharded.identify(probe, { topK: 1, threshold: 0 });
      if (after[0]?.subjectId === subjectId) wrong.push(`trial ${trial}: found after its removal`);
      counts.push(sharded.cluster.stale);
      reasked.push(counts.slice(1).map((n, i) => n - counts[i]!));
    }
    expect(wrong).toEqual([]);
    // Every shard was behind the change and asked again, twice a trial; the 1:1 in between never.
    expect(reasked).toEqual(Array.from({ length: 10 }, () => [SHARDS, 0, SHARDS]));
  });

  it('answers 503 (component matcher) when a shard has no replica, never a shorter list', async () => {
    // A client of a 4-shard layout: shards 0-3 of 4 have no process at all.
    const four = new MatcherCluster(clientSide, { shards: 4, prefix: PREFIX, timeoutMs: 3000, log });
    const error = await four.identify(faceTemplate(subjects[0]!.embeddings[0]!), { topK: 5, threshold: 0 }, 0).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('service-unavailable');
    expect((error as DomainError).extras.component).toBe('matcher');
    // A change id past the log: the shards cannot reach it, and say so rather than answer early.
    const ahead = new MatcherCluster(clientSide, { shards: SHARDS, prefix: PREFIX, timeoutMs: 1000, log });
    const late = await ahead.identify(faceTemplate(subjects[0]!.embeddings[0]!), { topK: 5, threshold: 0 }, 1e9).then(
      () => null,
      (e: unknown) => e as DomainError,
    );
    expect(late?.code).toBe('service-unavailable');
    expect(late?.operatorDetail).toMatch(/not in the gallery change log/);
  });

  it('refuses a malformed request on a shard subject with a 400 service error', async () => {
    const reply = await clientSide.request(
      `${PREFIX}.matcher.${SHARDS}.0`,
      new TextEncoder().encode('{"op":"identify"}'),
    );
    expect(reply.headers?.get('Nats-Service-Error-Code')).toBe('400');
    expect(reply.headers?.get('Nats-Service-Error')).toMatch(/probe/);
  });

  it('shows every shard through the NATS service API ($SRV.PING, $SRV.INFO, $SRV.STATS: nats micro ls/info/stats)', async () => {
    const ask = async (verb: string) => {
      const inbox = createInbox();
      const sub = clientSide.subscribe(inbox, { max: 1, timeout: 5000 });
      clientSide.publish(`$SRV.${verb}.bims-matcher`, Empty, { reply: inbox });
      for await (const m of sub) return m.json<Record<string, any>>();
      throw new Error('no answer');
    };
    const ping = await ask('PING');
    expect(ping).toMatchObject({ name: 'bims-matcher', type: 'io.nats.micro.v1.ping_response' });
    const info = await ask('INFO');
    expect(info.metadata).toMatchObject({ shards: '0,1,2', of: String(SHARDS) });
    expect(info.endpoints.map((e: any) => [e.name, e.subject, e.queue_group, e.metadata.shard])).toEqual(
      [0, 1, 2].map((s) => [`shard-${s}`, `${PREFIX}.matcher.${SHARDS}.${s}`, 'q', String(s)]),
    );
    const stats = await ask('STATS');
    const data = stats.endpoints.map((e: any) => e.data);
    expect(data.map((d: any) => d.shard)).toEqual([0, 1, 2]);
    expect(data.reduce((n: number, d: any) => n + d.subjects, 0)).toBe(SUBJECTS);
    for (const d of data) expect(d.lastChangeId).toBe(shards[d.shard]!.gallery.appliedChangeId);
    expect(stats.endpoints[0].num_requests).toBeGreaterThan(PROBES);
  });
});

/** A subject of one template, enrolled through `gallery`'s unit of work (a change-log row); its gallery key. */
async function enrol(gallery: GalleryService, subjectId: string, template: Uint8Array): Promise<number> {
  return gallery.transaction(async (trx, changes) => {
    const { rows } = await sql<{ id: number }>`insert into subjects (subject_id, status)
      values (${subjectId}, 'ENROLLED') returning id`.execute(trx);
    const row = rows[0]!;
    await sql`insert into face_samples (subject_ref, operation_uuid, rectangle, template_version, template)
      values (${row.id}, gen_random_uuid(), '{}'::jsonb, 'x', ${template})`.execute(trx);
    changes.put(row.id);
    return row.id;
  });
}

async function remove(gallery: GalleryService, ref: number): Promise<void> {
  await gallery.transaction(async (trx, changes) => {
    await trx.deleteFrom('face_samples').where('subject_ref', '=', ref).execute();
    await trx.deleteFrom('subjects').where('id', '=', ref).execute();
    changes.remove([ref]);
  });
}
