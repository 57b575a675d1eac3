import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, bootForTest, serviceDialects } from '../support/databases.js';
import { seedSubject } from '../support/subject-rows.js';

/**
 * The subject pages keep their validated query by its text, the subject reads their path (src/http/kept-input.ts): a repeated query must
 * answer exactly what a fresh one does, a bad query must be refused every time (never kept), another surface's
 * schema must not answer from the admin's kept query, and the bound must not lose answers.
 */

for (const dialect of serviceDialects) {
  describe(`kept queries and paths on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    const get = (path: string) => booted.app.request(path, { headers: { authorization: adminAuth } });
    const ids = async (path: string) => {
      const res = await get(path);
      expect(res.status).toBe(200);
      return ((await res.json()) as { subjectId: string }[]).map((s) => s.subjectId);
    };

    beforeAll(async () => {
      booted = await bootForTest(dialect);
      for (let i = 0; i < 5; i++) await seedSubject(booted.services.ctx.db, { subjectId: `kept-${i}` });
    });
    afterAll(async () => {
      await booted?.close();
    });

    it('answers a repeated query as a fresh one, and each query text its own page', async () => {
      const first = await ids('/admin/subjects?page=0&size=2');
      expect(first).toEqual(['kept-0', 'kept-1']);
      expect(await ids('/admin/subjects?page=0&size=2')).toEqual(first);
      expect(await ids('/admin/subjects?page=1&size=2')).toEqual(['kept-2', 'kept-3']);
      expect(await ids('/admin/subjects?size=2&page=1')).toEqual(['kept-2', 'kept-3']);
      expect(await ids('/admin/subjects?page=0&size=2&sort=subjectId,desc')).toEqual(['kept-4', 'kept-3']);
      expect(await ids('/admin/subjects')).toEqual(['kept-0', 'kept-1', 'kept-2', 'kept-3', 'kept-4']);
    });

    it('refuses a bad query every time, naming the field', async () => {
      for (let i = 0; i < 3; i++) {
        const res = await get('/admin/subjects?page=-1&size=2');
        expect(res.status).toBe(400);
        expect(res.headers.get('content-type')).toBe('application/problem+json');
        expect(JSON.stringify(await res.json())).toContain('query.page');
      }
    });

    it('answers the same query on both surfaces of the operation', async () => {
      expect(await ids('/subjects?page=0&size=2')).toEqual(['kept-0', 'kept-1']);
      expect(await ids('/admin/subjects?page=0&size=2')).toEqual(['kept-0', 'kept-1']);
    });

    it('still answers right after more distinct queries than it keeps', async () => {
      for (let size = 1; size <= 300; size++)
        expect((await get(`/admin/subjects?page=0&size=${size}`)).status).toBe(200);
      expect(await ids('/admin/subjects?page=0&size=3')).toEqual(['kept-0', 'kept-1', 'kept-2']);
      expect(await ids('/admin/subjects?page=2&size=2')).toEqual(['kept-4']);
    });

    it('answers a repeated subject path as a fresh one, refuses a bad one every time, past the bound too', async () => {
      const one = async (path: string) => {
        const res = await get(path);
        return { status: res.status, body: await res.text() };
      };
      const first = await one('/admin/subjects/kept-2');
      expect(first.status).toBe(200);
      expect(JSON.parse(first.body).subjectId).toBe('kept-2');
      expect(await one('/admin/subjects/kept-2')).toEqual(first);
      expect(JSON.parse((await one('/admin/subjects/kept-3')).body).subjectId).toBe('kept-3');
      for (let i = 0; i < 3; i++) {
        const bad = await get('/admin/subjects/bad%01id');
        expect(bad.status).toBe(400);
        expect(JSON.stringify(await bad.json())).toContain('path.subjectId');
      }
      for (let i = 0; i < 300; i++) expect((await get(`/admin/subjects/missing-${i}`)).status).toBe(404);
      expect(await one('/admin/subjects/kept-2')).toEqual(first);
      expect((await get('/admin/subjects/missing-7')).status).toBe(404);
    });
  });
}
