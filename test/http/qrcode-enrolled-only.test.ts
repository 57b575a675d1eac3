// QR codes are issued for ENROLLED subjects only: a REJECTED subject (a duplicate of someone) or one waiting for
// adjudication gets a 409 problem saying so, in every format and on every surface, and the operation's OpenAPI
// document declares it. On PGlite (serviceDialects); subjects are written straight into the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, bootForTest, serviceDialects } from '../support/databases.js';
import { seedSubject } from '../support/subject-rows.js';

for (const dialect of serviceDialects) {
  describe(`QR codes of subjects by status on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;

    beforeAll(async () => {
      booted = await bootForTest(dialect);
      const db = booted.services.ctx.db;
      await seedSubject(db, { subjectId: 'qr-enrolled' });
      await seedSubject(db, { subjectId: 'qr-rejected', status: 'REJECTED' });
      await seedSubject(db, { subjectId: 'qr-pending', status: 'PENDING_ADJUDICATION' });
    }, 60_000);
    afterAll(async () => {
      await booted?.close();
    });

    const get = (path: string, accept?: string) =>
      booted.app.request(path, { headers: { authorization: adminAuth, ...(accept ? { accept } : {}) } });

    it('issues the code of an ENROLLED subject', async () => {
      const res = await get('/admin/subjects/qrcode/qr-enrolled');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
    });

    for (const [subjectId, status] of [
      ['qr-rejected', 'REJECTED'],
      ['qr-pending', 'PENDING_ADJUDICATION'],
    ] as const) {
      for (const accept of [undefined, 'image/svg+xml', 'application/json']) {
        it(`answers 409 for a ${status} subject (Accept ${accept ?? 'none'}), naming its status and carrying no code`, async () => {
          for (const surface of ['/admin', '', '/user']) {
            const res = await get(`${surface}/subjects/qrcode/${subjectId}`, accept);
            expect(res.status, surface).toBe(409);
            expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
            const body = await res.json();
            expect(body).toMatchObject({ status: 409, subjectStatus: status });
            expect(body.detail).toBe(
              `Subject '${subjectId}' is ${status}: QR codes are issued for ENROLLED subjects only`,
            );
            expect(JSON.stringify(body)).not.toMatch(/payload|encryptedTemplate|image/);
          }
        });
      }
    }

    it('still answers 404 for a subject that does not exist', async () => {
      expect((await get('/admin/subjects/qrcode/qr-nobody')).status).toBe(404);
    });

    it("declares the 409 in the operation's OpenAPI document", async () => {
      const doc = await (await booted.app.request('/admin/openapi.json')).json();
      const op = doc.paths['/admin/subjects/qrcode/{subjectid}'].get;
      expect(op.responses['409'].description).toMatch(/not ENROLLED/);
      expect(op.description).toMatch(/ENROLLED subjects only/);
    });
  });
}
