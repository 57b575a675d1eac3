import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { adminAuth, basic, bootForTest, serviceDialects } from '../support/databases.js';
import { send as request } from '../support/http.js';
import { seedOperation, seedSubject, type SeededSubject } from '../support/subject-rows.js';

/**
 * The user surface acts on what the caller owns (domain.md; src/services/ownership.ts): it may verify and
 * identify over the whole gallery, but enumerates, destroys and reads in detail only what the calling
 * account recorded. Two USER accounts, alice and bob, each enrol subjects; bob also holds operations about
 * alice's subject (a REMOTE_VERIFY and a VERIFY with its probe image, as the service records them). Nothing
 * of alice's record reaches bob on /user, through any path (operation -> subject -> images, face and voice
 * data, QR code, modalities, re-extraction), bob's clearDb removes only bob's subjects and its log line names
 * bob, and the ADMIN surfaces stay unlimited.
 */

const PASSWORD = 'owner-password-123';

for (const dialect of serviceDialects) {
  describe(`user surface ownership on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    const lines: string[] = [];
    const ids = {} as Record<'alice' | 'bob', number>;
    const subjects = {} as Record<'a1' | 'a2' | 'b1' | 'admin1', SeededSubject>;
    let bobRemote: string;
    let bobVerify: string;
    const alice = basic('alice', PASSWORD);
    const bob = basic('bob', PASSWORD);

    beforeAll(async () => {
      booted = await bootForTest(dialect, {}, { logger: createLogger('info', (line) => lines.push(line)) });
      for (const username of ['alice', 'bob'] as const) {
        const res = await request(booted.app, 'POST', '/admin/accounts/create', {
          username,
          password: PASSWORD,
          role: 'USER',
        });
        expect(res.status).toBe(201);
        ids[username] = (await res.json()).id;
      }
      const db = booted.services.ctx.db;
      subjects.a1 = await seedSubject(db, {
        subjectId: 'shop-a1',
        accountId: ids.alice,
        faces: [80],
        voices: [60],
        metadata: { name: 'Alice A.' },
      });
      subjects.a2 = await seedSubject(db, { subjectId: 'shop-a2', accountId: ids.alice });
      subjects.b1 = await seedSubject(db, { subjectId: 'shop-b1', accountId: ids.bob });
      subjects.admin1 = await seedSubject(db, { subjectId: 'shop-admin1' });
      bobRemote = await seedOperation(db, 'shop-a1', 'REMOTE_VERIFY', ids.bob);
      bobVerify = await seedOperation(db, 'shop-a1', 'VERIFY', ids.bob);
    });
    afterAll(async () => {
      await booted?.close();
    });

    const send = (method: string, path: string, auth: string, body?: unknown) =>
      request(booted.app, method, path, body, auth);
    async function status(method: string, path: string, auth: string, body?: unknown) {
      return (await send(method, path, auth, body)).status;
    }
    async function json(path: string, auth: string) {
      const res = await send('GET', path, auth);
      const text = await res.text();
      expect(res.status, `${path}: ${text}`).toBe(200);
      return JSON.parse(text);
    }

    it('getSubjectsIdList on /user lists only the subjects the caller enrolled', async () => {
      const listed = async (auth: string) =>
        (await json('/user/subjects/id-list?size=100', auth)).map((s: { subjectId: string }) => s.subjectId).sort();
      expect(await listed(alice)).toEqual(['shop-a1', 'shop-a2']);
      expect(await listed(bob)).toEqual(['shop-b1']);
      expect(await listed(adminAuth)).toEqual(['shop-admin1']);
      // ADMIN surfaces are not limited.
      expect((await json('/admin/subjects/id-list?size=100', adminAuth)).length).toBe(4);
    });

    it("another account's subject is not found through an operation, however the operation was come by", async () => {
      for (const uuid of [bobRemote, bobVerify, subjects.a1.enrollUuid]) {
        expect(await status('GET', `/user/subjects/operation/${uuid}`, bob), uuid).toBe(404);
        expect(await status('GET', `/user/subjects/multimodal/operation/${uuid}`, bob), uuid).toBe(404);
      }
      // Bob's own operation is still his to read; it names the subject, not its record.
      expect(await json(`/user/operations/uuid/?uuid=${bobRemote}`, bob)).toMatchObject({
        uuid: bobRemote,
        subjectId: 'shop-a1',
      });
      expect(await status('GET', `/user/operations/uuid/?uuid=${subjects.a1.enrollUuid}`, bob)).toBe(404);
      // The owner reads it, and so does ADMIN.
      expect((await json(`/user/subjects/operation/${subjects.a1.enrollUuid}`, alice)).metadata).toEqual({
        name: 'Alice A.',
      });
      expect((await json(`/admin/subjects/operation/${bobRemote}`, adminAuth)).subjectId).toBe('shop-a1');
    });

    it("images, face and voice data of another account's subject are not found; the caller's own probe is", async () => {
      for (const path of [
        '/user/images/uuid/',
        '/user/biometric-data/face/uuid/',
        '/user/biometric-data/voice/uuid/',
      ]) {
        const res = await send('GET', `${path}?uuid=${subjects.a1.enrollUuid}`, bob);
        expect(res.status, path).toBe(404);
        expect((await res.json()).type).toMatch(/\/not-found$/);
        expect((await json(`${path}?uuid=${subjects.a1.enrollUuid}`, alice)).length, path).toBe(1);
        expect(
          (await json(`${path.replace('/user', '/admin')}?uuid=${subjects.a1.enrollUuid}`, adminAuth)).length,
          path,
        ).toBe(1);
      }
      // Bob's verification stored a probe image of his own (no subject): his to see.
      expect(await json(`/user/images/uuid/?uuid=${bobVerify}`, bob)).toEqual([
        expect.objectContaining({ uuid: bobVerify, kind: 'ORIGINAL' }),
      ]);
      expect(await status('GET', `/user/images/uuid/?uuid=${bobVerify}`, alice)).toBe(404);
    });

    it("QR code, enrolled modalities and re-extraction of another account's subject are not found", async () => {
      expect(await status('GET', '/user/subjects/qrcode/shop-a1', bob)).toBe(404);
      expect(await status('GET', '/user/subjects/modality/types?subjectId=shop-a1', bob)).toBe(404);
      expect(await status('POST', '/user/subjects/reextract-subject', bob, { subjectId: 'shop-a1' })).toBe(404);
      expect(await status('GET', '/user/subjects/modality/types?subjectId=shop-a1', alice)).toBe(200);
      expect(await status('GET', '/user/subjects/qrcode/shop-a1', alice)).toBe(200);
      expect(await status('GET', '/admin/subjects/qrcode/shop-a1', adminAuth)).toBe(200);
    });

    it('/user/management/info shows no host details; the ADMIN surface does', async () => {
      const user = await json('/user/management/info', bob);
      expect(Object.keys(user).sort()).toEqual([
        'licence',
        'startedAt',
        'templateVersion',
        'uptimeSeconds',
        'version',
        'workerPool',
      ]);
      expect(JSON.stringify(user)).not.toMatch(/test-host|hostname|runtime|serverVersion|accounts/);
      const admin = await json('/admin/management/info', adminAuth);
      expect(admin).toMatchObject({ node: { hostname: 'test-host' }, database: { dialect }, counts: { accounts: 3 } });
    });

    it("clearDb on /user removes only the caller's subjects, and its log line names the caller", async () => {
      lines.length = 0;
      const cleared = await json('/user/subjects/id-list', bob);
      expect(cleared.map((s: { subjectId: string }) => s.subjectId)).toEqual(['shop-b1']);
      const res = await send('DELETE', '/user/subjects/clear-db?prefix=shop-', bob);
      expect(res.status).toBe(200);
      expect((await res.json()).deleted).toBe(1);
      const left = (await json('/admin/subjects/id-list?size=100', adminAuth))
        .map((s: { subjectId: string }) => s.subjectId)
        .sort();
      expect(left).toEqual(['shop-a1', 'shop-a2', 'shop-admin1']);
      const logged = lines.map((l) => JSON.parse(l)).find((l) => l.message === 'subjects cleared');
      expect(logged).toMatchObject({ prefix: 'shop-', by: { accountId: ids.bob, username: 'bob', surface: 'user' } });
      // Alice's clear takes hers; ADMIN's takes the rest.
      expect((await (await send('DELETE', '/user/subjects/clear-db?prefix=shop-', alice)).json()).deleted).toBe(2);
      expect((await (await send('DELETE', '/admin/subjects/clear-db?prefix=shop-', adminAuth)).json()).deleted).toBe(1);
    });
  });
}
