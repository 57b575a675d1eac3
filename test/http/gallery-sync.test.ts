import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, bootForTest } from '../support/databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { photo } from '../biometrics/helpers.js';
import { boot, type Booted } from '../../src/runtime/bootstrap.js';
import { createLogger } from '../../src/logger.js';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const enrolled = 'labelled/franck/franck_01829.jpg';
const probe = 'labelled/franck/franck_04000.jpg';

/** Two service processes on one PostgreSQL database: what one enrols or deletes, the other's gallery sees. */
describe.skipIf(!process.env.DATABASE_URL)('gallery kept in step across processes (PostgreSQL LISTEN/NOTIFY)', () => {
  let a: Awaited<ReturnType<typeof bootForTest>>;
  let b: Booted;
  beforeAll(async () => {
    a = await bootForTest('postgres', {}, { createExtractor: sharedExtractorFactory() });
    b = await boot({
      config: a.config,
      runtime: 'test',
      hostname: 'second-node',
      logger: createLogger('silent'),
      createExtractor: sharedExtractorFactory(),
    });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await closeSharedExtractor();
  });

  const identifyOn = async (node: { app: Booted['app'] }) => {
    const res = await node.app.request('/admin/operations/create', {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'IDENTIFY', faces: [{ image: b64(photo(probe)) }] }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()).candidates as { subjectId: string }[]).map((c) => c.subjectId);
  };
  const within = async (ms: number, check: () => Promise<boolean>) => {
    const until = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > until) return false;
      await new Promise((r) => setTimeout(r, 50));
    }
    return true;
  };

  it('an enrolment through one process is identified by the other within a second', async () => {
    expect(await identifyOn(b)).toEqual([]); // loads b's gallery while it is still empty
    const res = await a.app.request('/admin/subjects/create', {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json' },
      body: JSON.stringify({ subjectId: 'sync-1', faces: [{ image: b64(photo(enrolled)) }] }),
    });
    expect(res.status).toBe(201);
    const started = Date.now();
    expect(await within(1000, async () => (await b.services.gallery.stats()).subjects === 1)).toBe(true);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await identifyOn(b)).toEqual(['sync-1']);
  });

  it('a deletion through one process leaves the other process gallery at once', async () => {
    const res = await a.app.request('/admin/subjects/clear-db?prefix=sync-', {
      method: 'DELETE',
      headers: { authorization: adminAuth },
    });
    expect(res.status).toBe(200);
    expect(await within(1000, async () => (await b.services.gallery.stats()).subjects === 0)).toBe(true);
    expect(await identifyOn(b)).toEqual([]);
  });
});
