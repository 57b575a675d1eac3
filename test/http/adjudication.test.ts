import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, basic, bootForTest, dialects } from '../support/databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { photo } from '../biometrics/helpers.js';
import { adjudicationOperations } from '../../src/operations/adjudication.js';
import { prefixOf, type OperationSpec } from '../../src/operations/types.js';
import { json } from '../../src/db/json.js';
import { unzipSync } from 'fflate';

/**
 * Adjudication through HTTP on every dialect: real photos of one person make a possible duplicate, which an
 * adjudicator takes from the queue and decides; agreement, conflict and ADMIN settlement; leases that run
 * out; the concurrent queue (no case handed to two adjudicators); deletes, clears and the surfaces.
 */

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const franck = (n: string) => `labelled/franck/franck_${n}.jpg`;
const PASSWORD = 'adjudicator-password-1';

afterAll(async () => {
  await closeSharedExtractor();
});

// PostgreSQL too (dialects, not serviceDialects): adjudicators calling at once race for the lease of a case, and
// their transactions interleave only on a pool of connections (PGlite's one connection runs them in turn).
for (const dialect of dialects) {
  describe(`adjudication on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    const adjudicators: { id: number; username: string; auth: string }[] = [];

    /** A request with Basic credentials (none when `auth` is empty). */
    const call = (method: string, path: string, auth = adminAuth, body?: unknown) =>
      booted.app.request(path, {
        method,
        headers: {
          ...(auth ? { authorization: auth } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    const answer = async (res: Response, status = 200) => {
      const text = await res.text();
      expect(res.status, text).toBe(status);
      return text ? JSON.parse(text) : null;
    };
    const setSetting = async (key: string, value: unknown) =>
      answer(await call('POST', '/admin/management/settings', adminAuth, { key, value }));
    const enrol = async (subjectId: string, image: string) =>
      answer(
        await call('POST', '/admin/subjects/create', adminAuth, { subjectId, faces: [{ image: b64(photo(image)) }] }),
        201,
      );
    const oncoming = (auth: string) => call('GET', '/adjudicator/adjudication/pending/oncoming', auth);
    const solve = (auth: string, body: Record<string, unknown>, surface = '/adjudicator') =>
      call('POST', `${surface}/adjudication/solve`, auth, body);
    const subjectStatus = async (subjectId: string) =>
      (await answer(await call('GET', `/admin/subjects/${subjectId}`))).status;
    const db = () => booted.services.ctx.db;
    const adj = (i: number) => adjudicators[i]!;

    /** A probe subject and its pending case, inserted directly (for the rules that need no photos). */
    const insertCase = async (subjectId: string, createdAt = new Date()) => {
      await db()
        .insertInto('subjects')
        .values({
          subject_id: subjectId,
          status: 'PENDING_ADJUDICATION',
          metadata: json({}),
          template_version: null,
          enrollment_operation_uuid: null,
          created_at: createdAt,
          updated_at: createdAt,
        })
        .execute();
      const row = await db()
        .insertInto('adjudication_cases')
        .values({
          operation_uuid: crypto.randomUUID(),
          subject_id: subjectId,
          created_at: createdAt,
          candidates: json([{ subjectId: 'franck-1', score: 60, scores: { FACE: 60 }, rank: 1 }]),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    };
    const clearPending = async () => answer(await call('DELETE', '/admin/adjudication/pending/clear-db'));

    beforeAll(async () => {
      booted = await bootForTest(dialect, {}, { createExtractor: sharedExtractorFactory() });
      for (let i = 0; i < 10; i++) {
        const username = `adjudicator-${i}`;
        const account = await answer(
          await call('POST', '/admin/accounts/create', adminAuth, {
            username,
            password: PASSWORD,
            role: 'ADJUDICATOR',
          }),
          201,
        );
        adjudicators.push({ id: account.id, username, auth: basic(username, PASSWORD) });
      }
    }, 120_000);
    afterAll(async () => {
      await booted?.close();
    });

    it('takes a near-duplicate photo from enrolment to ENROLLED through the queue, and another to REJECTED', async () => {
      expect((await enrol('franck-1', franck('01829'))).status).toBe('ENROLLED');
      await setSetting('deduplication.duplicateThreshold', 200);
      const probe = await enrol('franck-2', franck('04000'));
      expect(probe.status).toBe('PENDING_ADJUDICATION');

      // The case appears in the pending store, OPEN.
      const listed = await answer(
        await call('GET', '/adjudicator/adjudication/pending/list?subjectId=franck-2', adj(0).auth),
      );
      expect(listed).toHaveLength(1);
      expect(listed[0]).toMatchObject({
        subjectId: 'franck-2',
        status: 'OPEN',
        operationUuid: probe.enrollmentOperationUuid,
        decisions: [],
      });
      expect(listed[0].candidates[0]).toMatchObject({ subjectId: 'franck-1', rank: 1 });
      expect(listed[0].assignedTo).toBeUndefined();
      expect(await answer(await call('GET', '/admin/adjudication/pending/list/count?status=OPEN'))).toEqual({
        count: 1,
      });
      const caseId = listed[0].id;

      // Oncoming leases it to the first adjudicator, with the faces for side-by-side review.
      const taken = await answer(await oncoming(adj(0).auth));
      expect(taken.adjudication).toMatchObject({ id: caseId, status: 'ASSIGNED', assignedTo: adj(0).id });
      expect(
        new Date(taken.adjudication.leaseExpiresAt).getTime() - new Date(taken.adjudication.assignedAt).getTime(),
      ).toBe(900_000);
      expect(taken.operation).toMatchObject({
        uuid: probe.enrollmentOperationUuid,
        type: 'ENROLL',
        status: 'PENDING_ADJUDICATION',
      });
      // Who enrolled the probe, by name: an adjudicator cannot list accounts to look the id up.
      expect(taken.enrolledBy).toEqual({ accountId: taken.operation.accountId, username: 'admin' });
      expect(taken.probe.subject).toMatchObject({ subjectId: 'franck-2', status: 'PENDING_ADJUDICATION' });
      expect(taken.probe.faces).toHaveLength(1);
      expect(taken.probe.images.map((i: { kind: string }) => i.kind).sort()).toEqual(['ORIGINAL', 'TOKEN']);
      expect(taken.candidates[0].subject.subjectId).toBe('franck-1');
      expect(taken.candidates[0].images.length).toBeGreaterThan(0);
      expect(JSON.stringify(taken)).not.toMatch(/"(template|bytes)"\s*:/);
      // The faces themselves, for an adjudicator (the image downloads need ADMIN): the case read as a ZIP.
      const zip = await booted.app.request(`/adjudicator/adjudication/pending?id=${caseId}`, {
        headers: { authorization: adj(1).auth, accept: 'application/zip' },
      });
      expect(zip.status).toBe(200);
      expect(zip.headers.get('content-type')).toBe('application/zip');
      const files = unzipSync(new Uint8Array(await zip.arrayBuffer()));
      const manifest = JSON.parse(new TextDecoder().decode(files['manifest.json']));
      const caseImageIds = [...taken.probe.images, ...taken.candidates[0].images].map((i: { id: number }) => i.id);
      expect(manifest.entries.map((e: { imageId: number }) => e.imageId).sort()).toEqual(caseImageIds.sort());
      for (const entry of manifest.entries) expect(files[entry.path]!.length).toBe(entry.size);
      // The same caller gets the same case back; nobody else gets anything (204).
      expect((await answer(await oncoming(adj(0).auth))).adjudication.id).toBe(caseId);
      expect((await oncoming(adj(1).auth)).status).toBe(204);
      expect(
        await answer(
          await call('GET', `/admin/adjudication/pending/list/count?assignedTo=${adj(0).id}&status=ASSIGNED`),
        ),
      ).toEqual({ count: 1 });

      // Only the lease holder decides.
      expect((await solve(adj(1).auth, { caseId, decision: 'NOT_DUPLICATE', comment: 'not mine' })).status).toBe(403);
      const before = (
        await db()
          .selectFrom('subjects')
          .select('updated_at')
          .where('subject_id', '=', 'franck-2')
          .executeTakeFirstOrThrow()
      ).updated_at;
      const solved = await answer(
        await solve(adj(0).auth, {
          caseId,
          decision: 'NOT_DUPLICATE',
          comment: 'different day, same person? no: twins',
        }),
      );
      expect(solved).toMatchObject({
        state: 'SOLVED',
        outcome: 'NOT_DUPLICATE',
        decision: { caseId, accountId: adj(0).id, username: adj(0).username, decision: 'NOT_DUPLICATE' },
      });
      expect(await subjectStatus('franck-2')).toBe('ENROLLED');
      // The ENROLL operation that opened the case no longer says it waits: it follows the outcome.
      expect(
        (await answer(await call('GET', `/admin/operations/uuid/?uuid=${probe.enrollmentOperationUuid}`))).status,
      ).toBe('SUCCESS');
      const after = (
        await db()
          .selectFrom('subjects')
          .select('updated_at')
          .where('subject_id', '=', 'franck-2')
          .executeTakeFirstOrThrow()
      ).updated_at;
      expect(new Date(after).getTime()).toBeGreaterThan(new Date(before).getTime());

      // The ENROLLED probe joined the gallery: IDENTIFY finds it.
      const identified = await answer(
        await call('POST', '/admin/operations/create', adminAuth, {
          type: 'IDENTIFY',
          faces: [{ image: b64(photo(franck('02045'))) }],
        }),
        201,
      );
      expect(identified.candidates.map((c: { subjectId: string }) => c.subjectId)).toContain('franck-2');

      // The case moved to the solved store, on both surfaces that have it.
      expect((await call('GET', `/admin/adjudication/pending?id=${caseId}`)).status).toBe(404);
      const solvedCase = await answer(await call('GET', `/adjudicator/adjudication/solved?id=${caseId}`, adj(2).auth));
      expect(solvedCase.adjudication).toMatchObject({ id: caseId, outcome: 'NOT_DUPLICATE', subjectId: 'franck-2' });
      expect(solvedCase.adjudication.decisions).toHaveLength(1);
      expect(solvedCase.probe.subject.status).toBe('ENROLLED');
      expect(await answer(await call('GET', '/admin/adjudication/solved/list/count?outcome=NOT_DUPLICATE'))).toEqual({
        count: 1,
      });
      const decisions = await answer(
        await call('GET', `/adjudicator/adjudication/decision/list?caseId=${caseId}`, adj(3).auth),
      );
      expect(decisions).toEqual([
        expect.objectContaining({
          caseId,
          accountId: adj(0).id,
          decision: 'NOT_DUPLICATE',
          comment: 'different day, same person? no: twins',
        }),
      ]);
      expect(
        await answer(await call('GET', `/admin/adjudication/decision/adjudication?caseId=${caseId}`)),
      ).toMatchObject({
        caseId,
        state: 'SOLVED',
        outcome: 'NOT_DUPLICATE',
        requiredDecisions: 1,
        decisions: [{ accountId: adj(0).id }],
      });
      // A solved case takes no more decisions.
      expect((await solve(adminAuth, { caseId, decision: 'DUPLICATE', comment: '' }, '/admin')).status).toBe(409);

      // Another photo of him: this time the adjudicator says DUPLICATE, naming which candidate.
      const third = await enrol('franck-3', franck('02683'));
      expect(third.status).toBe('PENDING_ADJUDICATION');
      const next = await answer(await oncoming(adj(1).auth));
      expect(next.adjudication.subjectId).toBe('franck-3');
      const names = next.adjudication.candidates.map((c: { subjectId: string }) => c.subjectId);
      expect(names).toEqual(expect.arrayContaining(['franck-1', 'franck-2']));
      const stranger = await solve(adj(1).auth, {
        caseId: next.adjudication.id,
        decision: 'DUPLICATE',
        duplicateOfSubjectId: 'connery',
        comment: '',
      });
      expect(stranger.status).toBe(400);
      expect((await stranger.json()).errors[0].field).toBe('body.duplicateOfSubjectId');
      const rejected = await answer(
        await solve(adj(1).auth, {
          caseId: next.adjudication.id,
          decision: 'DUPLICATE',
          duplicateOfSubjectId: 'franck-2',
          comment: 'same man',
        }),
      );
      expect(rejected).toMatchObject({
        state: 'SOLVED',
        outcome: 'DUPLICATE',
        decision: { duplicateOfSubjectId: 'franck-2' },
      });
      expect(await subjectStatus('franck-3')).toBe('REJECTED');
      expect(
        (await answer(await call('GET', `/admin/operations/uuid/?uuid=${third.enrollmentOperationUuid}`))).status,
      ).toBe('DUPLICATE_FOUND');
      const solvedList = await answer(await call('GET', '/admin/adjudication/solved/list?sort=solvedAt,desc'));
      expect(solvedList.map((s: { subjectId: string }) => s.subjectId)).toEqual(['franck-3', 'franck-2']);
      expect(solvedList[0]).toMatchObject({ outcome: 'DUPLICATE', duplicateOfSubjectId: 'franck-2' });
      expect(
        await answer(
          await call('GET', '/adjudicator/adjudication/decision/list/count?decision=DUPLICATE', adj(0).auth),
        ),
      ).toEqual({ count: 1 });
      expect(await answer(await call('GET', `/admin/adjudication/decision/list/count?accountId=${adj(0).id}`))).toEqual(
        { count: 1 },
      );
      await answer(await call('POST', '/admin/management/settings/reset', adminAuth, {}));
    }, 120_000);

    it('needs adjudication.requiredDecisions agreeing decisions; disagreement is CONFLICTED until an ADMIN settles it', async () => {
      await clearPending();
      await setSetting('adjudication.requiredDecisions', 2);
      const agreed = await insertCase('agree-1', new Date(Date.now() - 60_000));
      const disputed = await insertCase('dispute-1');

      // Two adjudicators agree: solved on the second decision; the first releases the case back to the pool.
      expect((await answer(await oncoming(adj(0).auth))).adjudication.id).toBe(agreed);
      expect(
        await answer(await solve(adj(0).auth, { caseId: agreed, decision: 'NOT_DUPLICATE', comment: 'a' })),
      ).toMatchObject({ state: 'PENDING' });
      expect(await answer(await call('GET', `/admin/adjudication/pending?id=${agreed}`))).toMatchObject({
        adjudication: { status: 'OPEN', decisions: [{ accountId: adj(0).id }] },
      });
      // adj(0) decided on it already, so it is handed the other case; adj(1) gets the agreed one.
      expect((await answer(await oncoming(adj(0).auth))).adjudication.id).toBe(disputed);
      expect((await answer(await oncoming(adj(1).auth))).adjudication.id).toBe(agreed);
      expect((await solve(adj(0).auth, { caseId: agreed, decision: 'NOT_DUPLICATE', comment: 'again' })).status).toBe(
        409,
      );
      expect(
        await answer(await solve(adj(1).auth, { caseId: agreed, decision: 'NOT_DUPLICATE', comment: 'b' })),
      ).toMatchObject({ state: 'SOLVED', outcome: 'NOT_DUPLICATE' });
      expect(await subjectStatus('agree-1')).toBe('ENROLLED');

      // Disagreement: CONFLICTED, not handed out, not decidable by adjudicators; an ADMIN settles it.
      expect(
        await answer(await solve(adj(0).auth, { caseId: disputed, decision: 'NOT_DUPLICATE', comment: 'different' })),
      ).toMatchObject({ state: 'PENDING' });
      expect((await answer(await oncoming(adj(2).auth))).adjudication.id).toBe(disputed);
      expect(
        await answer(await solve(adj(2).auth, { caseId: disputed, decision: 'DUPLICATE', comment: 'same' })),
      ).toMatchObject({ state: 'CONFLICTED' });
      expect((await oncoming(adj(3).auth)).status).toBe(204);
      expect((await solve(adj(3).auth, { caseId: disputed, decision: 'DUPLICATE', comment: '' })).status).toBe(403);
      const conflicted = await answer(
        await call('GET', '/adjudicator/adjudication/pending/list?status=CONFLICTED', adj(3).auth),
      );
      expect(conflicted).toEqual([expect.objectContaining({ id: disputed, status: 'CONFLICTED' })]);
      expect(conflicted[0].assignedTo).toBeUndefined();
      expect(
        await answer(await call('GET', `/admin/adjudication/decision/adjudication?caseId=${disputed}`)),
      ).toMatchObject({ state: 'CONFLICTED', requiredDecisions: 2 });
      expect(
        await answer(await solve(adminAuth, { caseId: disputed, decision: 'DUPLICATE', comment: 'settled' }, '/admin')),
      ).toMatchObject({ state: 'SOLVED', outcome: 'DUPLICATE' });
      expect(await subjectStatus('dispute-1')).toBe('REJECTED');
      const settled = await answer(await call('GET', `/admin/adjudication/solved?id=${disputed}`));
      expect(settled.adjudication.decisions.map((d: { decision: string }) => d.decision)).toEqual([
        'NOT_DUPLICATE',
        'DUPLICATE',
        'DUPLICATE',
      ]);
      await setSetting('adjudication.requiredDecisions', null);
    });

    it('returns a case whose lease ran out to the pool, and refuses the former holder', async () => {
      await clearPending();
      await setSetting('adjudication.leaseSeconds', 30);
      const caseId = await insertCase('lease-1');
      const first = await answer(await oncoming(adj(4).auth));
      expect(
        new Date(first.adjudication.leaseExpiresAt).getTime() - new Date(first.adjudication.assignedAt).getTime(),
      ).toBe(30_000);
      expect((await oncoming(adj(5).auth)).status).toBe(204);
      await db()
        .updateTable('adjudication_cases')
        .set({ lease_expires_at: new Date(Date.now() - 1000) })
        .where('id', '=', caseId)
        .execute();
      expect(await answer(await call('GET', '/admin/adjudication/pending/list/count?status=OPEN'))).toEqual({
        count: 1,
      });
      const second = await answer(await oncoming(adj(5).auth));
      expect(second.adjudication).toMatchObject({ id: caseId, assignedTo: adj(5).id, status: 'ASSIGNED' });
      expect((await solve(adj(4).auth, { caseId, decision: 'NOT_DUPLICATE', comment: 'late' })).status).toBe(403);
      expect((await oncoming(adj(4).auth)).status).toBe(204);
      expect(await answer(await solve(adj(5).auth, { caseId, decision: 'NOT_DUPLICATE', comment: '' }))).toMatchObject({
        state: 'SOLVED',
      });
      await setSetting('adjudication.leaseSeconds', null);
    });

    it('never hands one case to two adjudicators calling concurrently', async () => {
      await clearPending();
      const base = Date.now() - 3_600_000;
      const ids: number[] = [];
      for (let i = 0; i < 20; i++)
        ids.push(await insertCase(`crowd-${String(i).padStart(2, '0')}`, new Date(base + i * 1000)));
      const handedTo = new Map<number, number>();
      const round = async () => {
        const calls = adjudicators.flatMap((a) =>
          Array.from({ length: 4 }, async () => {
            const res = await oncoming(a.auth);
            return { a, res, body: res.status === 200 ? await res.json() : null };
          }),
        );
        const answers = await Promise.all(calls);
        const perAdjudicator = new Map<number, Set<number>>();
        for (const { a, res, body } of answers) {
          expect([200, 204]).toContain(res.status);
          if (!body) continue;
          expect(body.adjudication.assignedTo).toBe(a.id);
          const set = perAdjudicator.get(a.id) ?? new Set();
          set.add(body.adjudication.id);
          perAdjudicator.set(a.id, set);
        }
        for (const [account, cases] of perAdjudicator) {
          // One caller's simultaneous calls all answer the one case leased to it.
          expect(cases.size).toBe(1);
          const id = [...cases][0]!;
          expect(handedTo.has(id), `case ${id} handed to ${handedTo.get(id)} and ${account}`).toBe(false);
          handedTo.set(id, account);
        }
        return perAdjudicator;
      };
      const leased = await round();
      expect(leased.size).toBe(10);
      const rows = await db()
        .selectFrom('adjudication_cases')
        .select(['id', 'assigned_to'])
        .where('assigned_to', 'is not', null)
        .where('status', '=', 'PENDING')
        .execute();
      expect(rows).toHaveLength(10);
      expect(new Set(rows.map((r) => r.assigned_to)).size).toBe(10);
      // The oldest ten went first.
      expect(rows.map((r) => r.id).sort((x, y) => x - y)).toEqual(ids.slice(0, 10));
      for (const row of rows) {
        const a = adjudicators.find((x) => x.id === row.assigned_to)!;
        expect(handedTo.get(row.id)).toBe(a.id);
        await answer(await solve(a.auth, { caseId: row.id, decision: 'DUPLICATE', comment: 'crowd' }));
      }
      expect((await round()).size).toBe(10);
      expect(handedTo.size).toBe(20);
      expect([...handedTo.keys()].sort((x, y) => x - y)).toEqual(ids);
      // Each still holds its second case, so each gets it back rather than nothing.
      const again = await Promise.all(adjudicators.map((a) => oncoming(a.auth)));
      expect(again.map((r) => r.status)).toEqual(adjudicators.map(() => 200));
      const assigned = await db()
        .selectFrom('adjudication_cases')
        .select(['id', 'assigned_to'])
        .where('status', '=', 'PENDING')
        .where('assigned_to', 'is not', null)
        .execute();
      expect(new Set(assigned.map((r) => r.assigned_to)).size).toBe(assigned.length);
    }, 120_000);

    it('deletes solved cases all or nothing, and clears each store with its decisions', async () => {
      const pendingCount = async () =>
        (await answer(await call('GET', '/admin/adjudication/pending/list/count'))).count as number;
      const pendingId = (
        await db()
          .selectFrom('adjudication_cases')
          .select('id')
          .where('status', '=', 'PENDING')
          .executeTakeFirstOrThrow()
      ).id;
      const solved = await answer(await call('GET', '/admin/adjudication/solved/list?size=1000&sort=id,asc'));
      expect(solved.length).toBeGreaterThan(3);
      const [one, two] = solved;
      expect((await call('DELETE', '/admin/adjudication/solved/delete', adminAuth, { ids: [] })).status).toBe(400);
      const partly = await call('DELETE', '/admin/adjudication/solved/delete', adminAuth, {
        ids: [one.id, pendingId, 999_999],
      });
      expect(partly.status).toBe(404);
      expect((await partly.json()).missing).toEqual([pendingId, 999_999]);
      expect((await call('GET', `/admin/adjudication/solved?id=${one.id}`)).status).toBe(200);
      expect(
        await answer(
          await call('DELETE', '/admin/adjudication/solved/delete', adminAuth, { ids: [one.id, two.id, one.id] }),
        ),
      ).toEqual({ deleted: 2 });
      expect((await call('GET', `/admin/adjudication/solved?id=${one.id}`)).status).toBe(404);
      expect((await call('GET', `/admin/adjudication/decision/adjudication?caseId=${one.id}`)).status).toBe(404);
      expect(await answer(await call('GET', `/admin/adjudication/decision/list/count?caseId=${two.id}`))).toEqual({
        count: 0,
      });

      const decisionsOfSolved = await db()
        .selectFrom('adjudication_decisions as d')
        .innerJoin('adjudication_cases as c', 'c.id', 'd.case_id')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('c.status', '=', 'SOLVED')
        .executeTakeFirstOrThrow();
      const cleared = await answer(await call('DELETE', '/admin/adjudication/solved/clear-db'));
      expect(cleared).toEqual({
        deleted: solved.length - 2,
        decisionsDeleted: Number(decisionsOfSolved.n),
        subjectsRejected: 0,
      });
      expect(await answer(await call('GET', '/admin/adjudication/solved/list/count'))).toEqual({ count: 0 });
      expect(await subjectStatus('franck-2')).toBe('ENROLLED');

      // Clearing the pending store leaves no PENDING_ADJUDICATION subject without a case: they become REJECTED.
      await db()
        .insertInto('adjudication_decisions')
        .values({
          case_id: pendingId,
          account_id: adj(0).id,
          decision: 'DUPLICATE',
          duplicate_of_subject_id: null,
          comment: 'x',
          created_at: new Date(),
        })
        .execute();
      // One of them from a real enrolment, whose ENROLL operation must stop saying PENDING_ADJUDICATION.
      await setSetting('deduplication.duplicateThreshold', 200);
      const late = await enrol('franck-4', franck('02045'));
      expect(late.status).toBe('PENDING_ADJUDICATION');
      await answer(await call('POST', '/admin/management/settings/reset', adminAuth, {}));
      const waiting = await pendingCount();
      expect(waiting).toBe(11);
      expect(await answer(await call('DELETE', '/admin/adjudication/pending/clear-db'))).toEqual({
        deleted: waiting,
        decisionsDeleted: 1,
        subjectsRejected: waiting,
      });
      expect(
        (await answer(await call('GET', `/admin/operations/uuid/?uuid=${late.enrollmentOperationUuid}`))).status,
      ).toBe('DUPLICATE_FOUND');
      expect(await pendingCount()).toBe(0);
      const stuck = await db()
        .selectFrom('subjects')
        .select('subject_id')
        .where('status', '=', 'PENDING_ADJUDICATION')
        .execute();
      expect(stuck).toEqual([]);
      expect((await oncoming(adj(0).auth)).status).toBe(204);
      expect(await answer(await call('DELETE', '/admin/adjudication/pending/clear-db'))).toEqual({
        deleted: 0,
        decisionsDeleted: 0,
        subjectsRejected: 0,
      });
    });

    it('answers unknown cases with 404 and bad input with 400', async () => {
      expect((await call('GET', '/admin/adjudication/pending?id=999999')).status).toBe(404);
      expect((await call('GET', '/admin/adjudication/solved?id=999999')).status).toBe(404);
      expect((await call('GET', '/admin/adjudication/decision/adjudication?caseId=999999')).status).toBe(404);
      expect((await solve(adminAuth, { caseId: 999_999, decision: 'DUPLICATE', comment: '' }, '/admin')).status).toBe(
        404,
      );
      expect((await call('GET', '/admin/adjudication/pending?id=abc')).status).toBe(400);
      expect((await call('GET', '/admin/adjudication/pending/list?sort=score,desc')).status).toBe(400);
      expect((await call('GET', '/admin/adjudication/pending/list?colour=red')).status).toBe(400);
      expect((await call('GET', '/admin/adjudication/solved/list?outcome=MAYBE')).status).toBe(400);
      expect((await solve(adminAuth, { caseId: 1, decision: 'MAYBE', comment: '' }, '/admin')).status).toBe(400);
      expect(
        (
          await solve(
            adminAuth,
            { caseId: 1, decision: 'NOT_DUPLICATE', duplicateOfSubjectId: 'x', comment: '' },
            '/admin',
          )
        ).status,
      ).toBe(400);
    });

    it('lists with paging, sort and the created range', async () => {
      const base = Date.parse('2026-01-01T00:00:00Z');
      for (let i = 0; i < 5; i++) await insertCase(`page-${i}`, new Date(base + i * 60_000));
      const page = await answer(
        await call('GET', '/admin/adjudication/pending/list?subjectId=page-&size=2&page=1&sort=createdAt,desc'),
      );
      expect(page.map((c: { subjectId: string }) => c.subjectId)).toEqual(['page-2', 'page-1']);
      const range = `createdFrom=${new Date(base + 60_000).toISOString()}&createdTo=${new Date(base + 180_000).toISOString()}`;
      expect(await answer(await call('GET', `/admin/adjudication/pending/list/count?${range}`))).toEqual({ count: 3 });
      expect(await answer(await call('GET', '/admin/adjudication/pending/list/count?subjectId=page-%25'))).toEqual({
        count: 0,
      });
      await clearPending();
    });

    it('answers on exactly its seed surfaces, with the scope of each', async () => {
      // "Nothing waits" is a documented 204 on both surfaces of oncoming.
      for (const [doc, prefix] of [
        ['/admin/openapi.json', '/admin'],
        ['/openapi.json', '/adjudicator'],
      ] as const) {
        const paths = (await answer(await booted.app.request(doc))).paths;
        expect(Object.keys(paths[`${prefix}/adjudication/pending/oncoming`].get.responses)).toEqual(
          expect.arrayContaining(['200', '204', '403']),
        );
      }
      const user = await answer(
        await call('POST', '/admin/accounts/create', adminAuth, {
          username: 'plain-user',
          password: PASSWORD,
          role: 'USER',
        }),
        201,
      );
      expect(user.role).toBe('USER');
      const userAuth = basic('plain-user', PASSWORD);
      for (const spec of adjudicationOperations as OperationSpec[]) {
        expect(spec.handle, spec.id).toBeDefined();
        const path = spec.path;
        const method = spec.method.toUpperCase();
        const onRoot = spec.surfaces.includes('root');
        const routeMissing = async (full: string) => {
          const res = await call(method, full, adminAuth);
          return res.status === 404 && String((await res.json()).type).endsWith('/route-not-found');
        };
        expect(await routeMissing(`/admin${path}`), `${spec.id} on admin`).toBe(false);
        expect(await routeMissing(`/adjudicator${path}`), `${spec.id} on /adjudicator`).toBe(!onRoot);
        expect(await routeMissing(`/user${path}`), `${spec.id} on user`).toBe(true);
        expect(await routeMissing(path), `${spec.id} without prefix`).toBe(true);
        if (onRoot) expect(prefixOf(spec, 'root')).toBe('/adjudicator');
        expect((await call(method, `/admin${path}`, adj(0).auth)).status, `${spec.id}: ADJUDICATOR on admin`).toBe(403);
        if (onRoot)
          expect((await call(method, `/adjudicator${path}`, userAuth)).status, `${spec.id}: USER on /adjudicator`).toBe(
            403,
          );
        if (onRoot)
          expect((await call(method, `/adjudicator${path}`, '')).status, `${spec.id}: no credentials`).toBe(401);
      }
    });
  });
}
