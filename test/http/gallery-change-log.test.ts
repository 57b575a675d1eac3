import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, bootForTest, serviceDialects } from '../support/databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { photo } from '../biometrics/helpers.js';
import { boot, type Booted } from '../../src/runtime/bootstrap.js';
import { createLogger } from '../../src/logger.js';
import { GalleryCache } from '../../src/services/gallery/gallery-cache.js';
import { pruneChanges } from '../../src/services/gallery/change-log.js';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const enrolled = 'labelled/franck/franck_01829.jpg';
const probe = 'labelled/franck/franck_04000.jpg';

type Node = { app: Booted['app'] };

const call = (node: Node, method: string, path: string, body?: unknown) =>
  node.app.request(path, {
    method,
    headers: { authorization: adminAuth, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });

async function enrol(node: Node, subjectId: string) {
  // Every subject is the same face: deduplication off, so each is ENROLLED rather than sent to adjudication.
  const res = await call(node, 'POST', '/admin/subjects/create', {
    subjectId,
    faces: [{ image: b64(photo(enrolled)) }],
    options: { deduplicate: false },
  });
  expect(res.status).toBe(201);
}

async function identifyOn(node: Node): Promise<string[]> {
  const res = await call(node, 'POST', '/admin/operations/create', {
    type: 'IDENTIFY',
    faces: [{ image: b64(photo(probe)) }],
  });
  expect(res.status).toBe(201);
  return ((await res.json()).candidates as { subjectId: string }[]).map((c) => c.subjectId);
}

/**
 * Two nodes on one PostgreSQL database, the second without LISTEN (as on Cloudflare Workers): it learns of the
 * first node's changes from the gallery change log, read before each search. Nothing waits: the very next
 * identification on the second node must already see each change.
 */
describe.skipIf(!process.env.DATABASE_URL)(
  "gallery change log: a node without LISTEN sees other nodes' changes at once",
  () => {
    let a: Awaited<ReturnType<typeof bootForTest>>;
    let b: Booted;
    beforeAll(async () => {
      a = await bootForTest('postgres', {}, { createExtractor: sharedExtractorFactory() });
      b = await boot({
        config: a.config,
        runtime: 'test',
        hostname: 'polling-node',
        logger: createLogger('silent'),
        createExtractor: sharedExtractorFactory(),
        galleryFreshness: 'poll',
      });
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
      await closeSharedExtractor();
    });

    it('an enrolment, then its deletion, through the first node', async () => {
      expect(await identifyOn(b)).toEqual([]); // b's gallery is loaded while empty
      await enrol(a, 'log-1');
      expect(await identifyOn(b)).toEqual(['log-1']);
      const res = await call(a, 'DELETE', '/admin/subjects/id/?subjectId=log-1');
      expect(res.status).toBe(200);
      expect(await identifyOn(b)).toEqual([]);
    });

    it('a prefix clear and a whole-database clear (reset entries) through the first node', async () => {
      await enrol(a, 'log-2');
      expect(await identifyOn(b)).toEqual(['log-2']);
      expect((await call(a, 'DELETE', '/admin/subjects/clear-db?prefix=log-')).status).toBe(200);
      expect(await identifyOn(b)).toEqual([]);
      await enrol(a, 'log-3');
      expect(await identifyOn(b)).toEqual(['log-3']);
      expect((await call(a, 'DELETE', '/admin/management/database/clear-db')).status).toBe(200);
      expect(await identifyOn(b)).toEqual([]);
    });

    it('a node whose unapplied changes were pruned reloads its gallery', async () => {
      expect(await identifyOn(b)).toEqual([]); // b is caught up
      await enrol(a, 'log-4');
      // Retention 0: the enrolment's row, the newest, becomes the horizon marker and loses its content.
      await pruneChanges(a.services.ctx.db, 0);
      expect(await identifyOn(b)).toEqual(['log-4']);
    });
  },
);

/**
 * The same on PGlite (serviceDialects; PostgreSQL is the two-node suite above), one process: a second gallery in poll mode on the same database (a second
 * isolate, as far as the log is concerned) follows what the app's enrolments, deletions and clears commit.
 */
describe.each(serviceDialects)('gallery change log catch-up (%s)', (dialect) => {
  let app: Awaited<ReturnType<typeof bootForTest>>;
  let other: GalleryCache;
  beforeAll(async () => {
    app = await bootForTest(dialect, {}, { createExtractor: sharedExtractorFactory() });
    const { ctx } = app.services;
    other = new GalleryCache({ ...ctx, node: { ...ctx.node, id: crypto.randomUUID() } }, 'poll');
  });
  afterAll(async () => {
    await app?.close();
    await closeSharedExtractor();
  });

  /** What the other gallery identifies for the subject's own stored template. */
  const othersMatch = async (subjectId: string) => {
    const row = await app.services.ctx.db
      .selectFrom('face_samples as f')
      .innerJoin('subjects as s', 's.id', 'f.subject_ref')
      .select('f.template')
      .where('s.subject_id', '=', subjectId)
      .executeTakeFirstOrThrow();
    await other.upToDate();
    return (await other.identify(row.template!, { topK: 5, threshold: 0 })).map((m) => m.subjectId);
  };

  it('puts, removes and resets reach a gallery loaded before them', async () => {
    expect((await other.stats()).subjects).toBe(0);
    await enrol(app, 'cu-1');
    expect((await other.stats()).subjects).toBe(1);
    expect(await othersMatch('cu-1')).toEqual(['cu-1']);
    await enrol(app, 'cu-2');
    expect((await call(app, 'DELETE', '/admin/subjects/id/?subjectId=cu-1')).status).toBe(200);
    expect(await othersMatch('cu-2')).toEqual(['cu-2']);
    expect((await call(app, 'DELETE', '/admin/subjects/clear-db?prefix=cu-')).status).toBe(200);
    expect((await other.stats()).subjects).toBe(0);
  });

  it('falls back to a reload past the pruned horizon, and keeps following after it', async () => {
    await enrol(app, 'cu-3');
    await pruneChanges(app.services.ctx.db, 0);
    expect(await othersMatch('cu-3')).toEqual(['cu-3']);
    expect((await call(app, 'DELETE', '/admin/management/database/clear-db')).status).toBe(200);
    expect((await other.stats()).subjects).toBe(0);
    await enrol(app, 'cu-4');
    expect(await othersMatch('cu-4')).toEqual(['cu-4']);
  });
});
