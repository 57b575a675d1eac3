// The adjudication repository over both dialects: case rows come back decoded (candidates as a list, every
// timestamp a Date) from reads, leases and pages; the next case to hand out is the oldest open one the
// adjudicator has not decided on; the pending store's OPEN/ASSIGNED filter follows the clock; decisions carry
// their author's name; clearing counts decisions before the cascade and settles only what is still pending.
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../src/db/json.js';
import type { Database } from '../../src/db/tables.js';
import {
  deleteCasesOfStore,
  findCaseInStore,
  findLeaseHeldBy,
  leaseCase,
  lockCasesOfStore,
  lockNextOpenCaseFor,
  markCaseSolved,
} from '../../src/db/repositories/adjudication/cases.js';
import {
  countDecisionsOfCases,
  findDecisionById,
  findDecisionsOfCases,
  insertDecision,
} from '../../src/db/repositories/adjudication/decisions.js';
import {
  countPending,
  findDecisionPage,
  findPendingPage,
  findSolvedPage,
} from '../../src/db/repositories/adjudication/lists.js';
import { rejectPendingSubjects, settlePendingEnrolOperations } from '../../src/db/repositories/adjudication/related.js';
import { dialects } from '../support/databases.js';
import { openMigratedDatabase } from '../support/migrated-database.js';

const t0 = new Date('2026-07-01T08:00:00.000Z');
const later = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
const candidates = [{ subjectId: 'cand_1', score: 0.93, scores: { FACE: 0.93 }, rank: 1 }];

for (const dialect of dialects) {
  describe(`adjudication repository on ${dialect}`, () => {
    let db: Kysely<Database>;
    let close: () => Promise<void>;
    const ids: number[] = [];
    const uuids = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    beforeAll(async () => {
      ({ db, close } = await openMigratedDatabase(dialect));
      await db
        .insertInto('accounts')
        .values([
          { id: 1, username: 'ann', password_hash: 'x', role: 'ADJUDICATOR' },
          { id: 2, username: 'bob', password_hash: 'x', role: 'ADJUDICATOR' },
        ])
        .execute();
      for (const [i, uuid] of uuids.entries()) {
        await db
          .insertInto('subjects')
          .values({
            subject_id: `probe_${i}`,
            status: 'PENDING_ADJUDICATION',
            metadata: json({}),
            enrollment_operation_uuid: uuid,
          })
          .execute();
        await db
          .insertInto('operations')
          .values({
            uuid,
            type: 'ENROLL',
            status: 'PENDING_ADJUDICATION',
            subject_id: `probe_${i}`,
            modalities: json(['FACE']),
            score: null,
            threshold: null,
            candidates: json(candidates),
            checks: json(null),
            details: json(null),
            duration_ms: 1,
            account_id: null,
            surface: 'admin',
            created_at: t0,
          })
          .execute();
        const row = await db
          .insertInto('adjudication_cases')
          .values({
            operation_uuid: uuid,
            subject_id: `probe_${i}`,
            candidates: json(candidates),
            created_at: later(i),
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        ids.push(row.id);
      }
    }, 120_000);
    afterAll(async () => close?.());

    it('reads a case decoded: candidates as a list, timestamps as Dates, only from its store', async () => {
      const row = await findCaseInStore(db, ids[0]!, 'pending');
      expect(row?.candidates).toEqual(candidates);
      expect(row?.created_at).toBeInstanceOf(Date);
      expect(row?.created_at.toISOString()).toBe(t0.toISOString());
      expect(row?.lease_expires_at).toBeNull();
      expect(await findCaseInStore(db, ids[0]!, 'solved')).toBeUndefined();
    });

    it('hands out the oldest open case the adjudicator has not decided on, and leases it', async () => {
      await insertDecision(db, {
        case_id: ids[0]!,
        account_id: 1,
        decision: 'NOT_DUPLICATE',
        duplicate_of_subject_id: null,
        comment: 'looks new',
        created_at: later(10),
      });
      const leased = await db.transaction().execute(async (trx) => {
        const next = await lockNextOpenCaseFor(trx, 1, later(20));
        expect(next).toBe(ids[1]);
        return leaseCase(trx, next!, 1, later(20), later(80));
      });
      expect(leased.assigned_at).toBeInstanceOf(Date);
      expect(leased.lease_expires_at?.toISOString()).toBe(later(80).toISOString());
      expect(leased.candidates).toEqual(candidates);
      expect((await findLeaseHeldBy(db, 1, later(30)))?.id).toBe(ids[1]);
      expect(await findLeaseHeldBy(db, 1, later(80))).toBeUndefined();
      // bob has decided nothing: case 0 is his oldest; case 1 is leased to ann until 80 s.
      expect(await db.transaction().execute((trx) => lockNextOpenCaseFor(trx, 2, later(30)))).toBe(ids[0]);
    });

    it('filters the pending store by the clock (a lease that ran out is OPEN again) and counts the same', async () => {
      const window = { page: 0, size: 10 };
      const order = { column: 'created_at', direction: 'asc' as const };
      expect((await findPendingPage(db, { status: 'ASSIGNED' }, later(30), order, window)).map((r) => r.id)).toEqual([
        ids[1],
      ]);
      expect((await findPendingPage(db, { status: 'OPEN' }, later(30), order, window)).map((r) => r.id)).toEqual([
        ids[0],
        ids[2],
      ]);
      expect(await countPending(db, { status: 'OPEN' }, later(90))).toBe(3);
      // Never-assigned cases sort last whichever the direction.
      const byAssigned = await findPendingPage(db, {}, later(30), { column: 'assigned_at', direction: 'desc' }, window);
      expect(byAssigned.map((r) => r.id)).toEqual([ids[1], ids[2], ids[0]]);
      expect(await countPending(db, { subjectId: 'probe_%' }, later(30))).toBe(0);
    });

    it('reads decisions with their authors and pages them; solved cases by solved_at', async () => {
      const decisions = await findDecisionsOfCases(db, [ids[0]!, ids[1]!]);
      expect(decisions.map((d) => [d.case_id, d.username, d.comment])).toEqual([[ids[0], 'ann', 'looks new']]);
      expect(decisions[0]!.created_at).toBeInstanceOf(Date);
      expect((await findDecisionById(db, decisions[0]!.id))?.username).toBe('ann');
      const page = await findDecisionPage(
        db,
        { accountId: 1 },
        { column: 'created_at', direction: 'desc' },
        { page: 0, size: 5 },
      );
      expect(page.map((d) => d.id)).toEqual([decisions[0]!.id]);

      await markCaseSolved(db, ids[2]!, 'DUPLICATE', later(40));
      const solved = await findSolvedPage(
        db,
        { outcome: 'DUPLICATE' },
        { column: 'solved_at', direction: 'desc' },
        { page: 0, size: 5 },
      );
      expect(solved.map((r) => r.id)).toEqual([ids[2]]);
      expect(solved[0]!.solved_at?.toISOString()).toBe(later(40).toISOString());
    });

    it('clears the pending store: decisions counted first, subjects and ENROLL operations settled only when still pending', async () => {
      const result = await db.transaction().execute(async (trx) => {
        const rows = await lockCasesOfStore(trx, 'pending');
        const decisions = await countDecisionsOfCases(
          trx,
          rows.map((r) => r.id),
        );
        const deleted = await deleteCasesOfStore(trx, 'pending');
        const rejected = await rejectPendingSubjects(trx, [...rows.map((r) => r.subject_id), 'probe_2'], later(50));
        const settled = await settlePendingEnrolOperations(
          trx,
          rows.map((r) => r.operation_uuid),
          'DUPLICATE_FOUND',
        );
        return { cases: rows.map((r) => r.id).sort(), decisions, deleted, rejected, settled };
      });
      expect(result).toEqual({ cases: [ids[0], ids[1]].sort(), decisions: 1, deleted: 2, rejected: 3, settled: 2 });
      expect(await countDecisionsOfCases(db, [ids[0]!])).toBe(0);
      expect(await settlePendingEnrolOperations(db, uuids, 'SUCCESS')).toBe(1);
      expect(await countDecisionsOfCases(db, [])).toBe(0);
    });
  });
}
