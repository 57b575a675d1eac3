import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MatcherPool } from '../../src/biometrics/node-matcher-pool.js';
import { GalleryCache } from '../../src/services/gallery/gallery-cache.js';
import { adminAuth, bootForTest, serviceDialects } from '../support/databases.js';
import { seedSubject, type SeededSubject } from '../support/subject-rows.js';

/**
 * The service's 1:N search shared across matcher threads (issue 19), as the Node runtime wires it: the gallery
 * of a booted service lives in shared memory and every search is split across two real threads (minRows 0, so
 * even this small gallery goes to them). Its answers must be exactly those of a gallery searched on one
 * thread over the same database, and a deleted subject must be gone from threaded searches at once.
 */
for (const dialect of serviceDialects) {
  describe(`1:N over matcher threads on ${dialect}`, () => {
    const pool = new MatcherPool(2, { minRows: 0 });
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    let oneThread: GalleryCache;
    const subjects: SeededSubject[] = [];

    beforeAll(async () => {
      booted = await bootForTest(dialect, {}, { matcherThreads: pool });
      for (let i = 0; i < 48; i++)
        subjects.push(await seedSubject(booted.services.ctx.db, { subjectId: `thr-${i}`, faces: [60 + (i % 30)] }));
      // The rows were written behind the service's back (no change log), so it reloads them like the reference.
      booted.services.gallery.forget();
      oneThread = new GalleryCache(booted.services.ctx, 'poll');
    });
    afterAll(async () => {
      await booted?.close();
    });

    it('answers every probe exactly as a one-thread search does, and the threads did the scanning', async () => {
      for (const s of subjects) {
        const options = { topK: 5, threshold: 0 };
        const threaded = await booted.services.gallery.identify(s.template, options);
        expect(threaded[0]?.subjectId, s.subjectId).toBe(s.subjectId);
        expect(threaded).toEqual(await oneThread.identify(s.template, options));
      }
      // Each of the two threads answered a slice of the last search.
      expect(pool.lastSliceMs.filter((ms) => ms >= 0)).toHaveLength(2);
    });

    it('leaves out excluded subjects and a subject deleted through the API', async () => {
      const [first, second] = subjects;
      const excluded = await booted.services.gallery.identify(first!.template, {
        topK: 48,
        threshold: 0,
        excludeRefs: [first!.id],
      });
      expect(excluded.map((m) => m.subjectId)).not.toContain(first!.subjectId);
      expect(excluded).toHaveLength(47);

      const res = await booted.app.request(`/admin/subjects/id/?subjectId=${second!.subjectId}`, {
        method: 'DELETE',
        headers: { authorization: adminAuth },
      });
      expect(res.status).toBe(200);
      const after = await booted.services.gallery.identify(second!.template, { topK: 48, threshold: 0 });
      expect(after.map((m) => m.subjectId)).not.toContain(second!.subjectId);
      expect(after).toHaveLength(47);
    });
  });
}
