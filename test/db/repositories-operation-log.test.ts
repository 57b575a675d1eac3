// The operation log's repository over both dialects: rows come back decoded (jsonb as values, created_at as
// a Date) from the insert and from every read; pages sort rows without a score last in either direction with
// ties by id; the ownership condition narrows a UUID read; a delete takes the probe data but refuses nothing
// itself, and the dependency query names the subjects that hold an operation.
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../src/db/json.js';
import type { Database } from '../../src/db/tables.js';
import {
  countOperations,
  deleteOperationsWithProbes,
  findOperationById,
  findOperationByUuid,
  findOperationPage,
  findSubjectsDependingOnOperations,
  insertOperation,
  insertProbeImage,
  lockOperationsByUuids,
} from '../../src/db/repositories/operation-log.js';
import { ownsOperation } from '../../src/services/ownership.js';
import { dialects } from '../support/databases.js';
import { openMigratedDatabase } from '../support/migrated-database.js';

const at = new Date('2026-06-01T12:00:00.000Z');
const candidates = [{ subjectId: 'alice', score: 0.91, scores: { FACE: 0.91 }, rank: 1 }];

function operation(uuid: string, score: number | null, accountId: number | null, offsetMs = 0) {
  return {
    uuid,
    type: 'IDENTIFY' as const,
    status: 'SUCCESS' as const,
    subject_id: null,
    modalities: json(['FACE']),
    score,
    threshold: 0.5,
    candidates: json(score === null ? null : candidates),
    checks: json(null),
    details: json({ reason: 'test' }),
    duration_ms: 12,
    account_id: accountId,
    surface: 'admin' as const,
    created_at: new Date(at.getTime() + offsetMs),
  };
}

for (const dialect of dialects) {
  describe(`operation-log repository on ${dialect}`, () => {
    let db: Kysely<Database>;
    let close: () => Promise<void>;
    const uuids = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    beforeAll(async () => {
      ({ db, close } = await openMigratedDatabase(dialect));
      await db.insertInto('accounts').values({ id: 7, username: 'u7', password_hash: 'x', role: 'USER' }).execute();
    }, 120_000);
    afterAll(async () => close?.());

    it('answers inserted and read rows decoded: jsonb as values, created_at as a Date', async () => {
      const stored = await insertOperation(db, operation(uuids[0]!, 0.91, 7));
      expect(stored.candidates).toEqual(candidates);
      expect(stored.modalities).toEqual(['FACE']);
      expect(stored.details).toEqual({ reason: 'test' });
      expect(stored.checks).toBeNull();
      expect(stored.created_at).toBeInstanceOf(Date);
      expect(stored.created_at.toISOString()).toBe(at.toISOString());
      const read = await findOperationById(db, stored.id);
      expect(read).toEqual(stored);
      expect(await findOperationById(db, stored.id + 1000)).toBeUndefined();
    });

    it('pages with rows without a score last in both directions, ties by id, and counts the same filter', async () => {
      await insertOperation(db, operation(uuids[1]!, null, null, 1000));
      await insertOperation(db, operation(uuids[2]!, 0.7, null, 2000));
      await insertOperation(db, operation(uuids[3]!, 0.7, null, 3000));
      const window = { page: 0, size: 10 };
      const desc = await findOperationPage(db, {}, { column: 'score', direction: 'desc' }, window);
      expect(desc.map((r) => r.uuid)).toEqual([uuids[0], uuids[3], uuids[2], uuids[1]]);
      const asc = await findOperationPage(db, {}, { column: 'score', direction: 'asc' }, window);
      expect(asc.map((r) => r.uuid)).toEqual([uuids[2], uuids[3], uuids[0], uuids[1]]);
      expect(asc[3]!.candidates).toBeNull();
      const second = await findOperationPage(
        db,
        { createdFrom: new Date(at.getTime() + 1000) },
        { column: 'created_at', direction: 'desc' },
        { page: 1, size: 2 },
      );
      expect(second.map((r) => r.uuid)).toEqual([uuids[1]]);
      expect(await countOperations(db, { createdFrom: new Date(at.getTime() + 1000) })).toBe(3);
      expect(await countOperations(db, { accountId: 7 })).toBe(1);
    });

    it('narrows a read by UUID with the ownership condition', async () => {
      expect((await findOperationByUuid(db, uuids[0]!))?.score).toBe(0.91);
      expect(
        (await findOperationByUuid(db, uuids[0]!, (column) => ownsOperation(column, { accountId: 7 })))?.uuid,
      ).toBe(uuids[0]);
      expect(
        await findOperationByUuid(db, uuids[0]!, (column) => ownsOperation(column, { accountId: 8 })),
      ).toBeUndefined();
      // A caller without an account owns nothing, not even rows that name no account.
      expect(
        await findOperationByUuid(db, uuids[1]!, (column) => ownsOperation(column, { accountId: null })),
      ).toBeUndefined();
    });

    it('names the subjects holding an operation and deletes operations with their probe images only', async () => {
      const subject = await db
        .insertInto('subjects')
        .values({ subject_id: 'alice', status: 'ENROLLED', metadata: json({}), enrollment_operation_uuid: uuids[0]! })
        .returning('id')
        .executeTakeFirstOrThrow();
      const image = { format: 'JPEG', width: 1, height: 1, bytes: new Uint8Array([1]), created_at: at };
      await db
        .insertInto('images')
        .values({ ...image, operation_uuid: uuids[2]!, subject_ref: subject.id, kind: 'ORIGINAL' })
        .execute();
      await insertProbeImage(db, { ...image, operation_uuid: uuids[1]! });
      const held = await findSubjectsDependingOnOperations(db, [uuids[0]!, uuids[1]!, uuids[2]!]);
      expect(held.map((r) => `${r.uuid}:${r.subject_id}`).sort()).toEqual(
        [`${uuids[0]}:alice`, `${uuids[2]}:alice`].sort(),
      );

      const deleted = await db.transaction().execute(async (trx) => {
        expect(await lockOperationsByUuids(trx, [uuids[1]!, 'ffffffff-0000-4000-8000-000000000000'])).toEqual([
          uuids[1],
        ]);
        return deleteOperationsWithProbes(trx, [uuids[1]!]);
      });
      expect(deleted).toBe(1);
      const images = await db.selectFrom('images').select('operation_uuid').execute();
      expect(images.map((r) => r.operation_uuid)).toEqual([uuids[2]]);
    });
  });
}
