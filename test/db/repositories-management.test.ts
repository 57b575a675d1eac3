// The management repository over both dialects: the heartbeat upsert moves only last_seen_at and nodes come
// back with Dates, the statistics queries answer on PGlite as on PostgreSQL, and the whole-database clear
// counts exactly what it truncates (foreign keys between the cleared tables included).
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../src/db/json.js';
import type { Database } from '../../src/db/tables.js';
import {
  connectionsByState,
  countPendingAdjudicationCases,
  countSubjectsByStatus,
  countTableRows,
  currentDatabaseName,
  deleteServiceNodesExcept,
  isInRecovery,
  listBaseTables,
  listServiceNodes,
  streamingReplicas,
  truncateTablesCounting,
  upsertServiceNode,
} from '../../src/db/repositories/management.js';
import { dialects } from '../support/databases.js';
import { openMigratedDatabase } from '../support/migrated-database.js';

const started = new Date('2026-05-01T10:00:00.000Z');
const node = (id: string, seen: Date) => ({
  node_id: id,
  hostname: `host-${id}`,
  version: '1.0.0',
  runtime: 'node',
  started_at: started,
  last_seen_at: seen,
});

for (const dialect of dialects) {
  describe(`management repository on ${dialect}`, () => {
    let db: Kysely<Database>;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ db, close } = await openMigratedDatabase(dialect));
    }, 120_000);
    afterAll(async () => close?.());

    it('upserts a heartbeat (only last_seen_at moves) and lists nodes with Dates, oldest start first', async () => {
      await upsertServiceNode(db, node('b', started));
      await upsertServiceNode(db, { ...node('a', started), started_at: new Date(started.getTime() - 1000) });
      const later = new Date(started.getTime() + 60_000);
      await upsertServiceNode(db, { ...node('b', later), hostname: 'ignored', started_at: later });
      const nodes = await listServiceNodes(db);
      expect(nodes.map((n) => n.node_id)).toEqual(['a', 'b']);
      expect(nodes[1]!.last_seen_at).toBeInstanceOf(Date);
      expect(nodes[1]!.last_seen_at.toISOString()).toBe(later.toISOString());
      expect(nodes[1]!.started_at.toISOString()).toBe(started.toISOString());
      expect(nodes[1]!.hostname).toBe('host-b');
      expect(await deleteServiceNodesExcept(db, 'b')).toBe(1);
      expect((await listServiceNodes(db)).map((n) => n.node_id)).toEqual(['b']);
    });

    it('answers the statistics queries', async () => {
      expect(typeof (await currentDatabaseName(db))).toBe('string');
      expect(await isInRecovery(db)).toBe(false);
      expect(await streamingReplicas(db)).toEqual([]);
      const connections = await connectionsByState(db);
      expect(connections.every((c) => typeof c.count === 'number' && c.count > 0)).toBe(true);
      expect(await listBaseTables(db)).toEqual(
        expect.arrayContaining(['subjects', 'templates', 'adjudication_cases', 'service_nodes']),
      );
    });

    it('counts subjects by status and pending cases, and truncates counting what went', async () => {
      const subjects = await db
        .insertInto('subjects')
        .values(
          ['ENROLLED', 'ENROLLED', 'PENDING_ADJUDICATION'].map((status, i) => ({
            subject_id: `s${i}`,
            status: status as 'ENROLLED',
            metadata: json({}),
          })),
        )
        .returning('id')
        .execute();
      await db
        .insertInto('templates')
        .values({ subject_ref: subjects[0]!.id, modality: 'FACE', template_version: 'v', data: new Uint8Array([1]) })
        .execute();
      await db
        .insertInto('adjudication_cases')
        .values(
          ['PENDING', 'CONFLICTED', 'SOLVED'].map((status, i) => ({
            operation_uuid: crypto.randomUUID(),
            subject_id: `s${i}`,
            candidates: json([]),
            status: status as 'PENDING',
          })),
        )
        .execute();
      const byStatus = Object.fromEntries((await countSubjectsByStatus(db)).map((r) => [r.status, r.count]));
      expect(byStatus).toEqual({ ENROLLED: 2, PENDING_ADJUDICATION: 1 });
      expect(await countPendingAdjudicationCases(db)).toBe(2);
      expect(await countTableRows(db, 'operations')).toBe(0);

      // Every table referencing subjects goes in the same statement, as truncateDatabase clears them all.
      const tables = [
        'subjects',
        'templates',
        'images',
        'face_samples',
        'voice_samples',
        'adjudication_cases',
        'adjudication_decisions',
      ];
      const removed = await db.transaction().execute((trx) => truncateTablesCounting(trx, tables));
      expect(removed).toEqual({
        subjects: 3,
        templates: 1,
        images: 0,
        face_samples: 0,
        voice_samples: 0,
        adjudication_cases: 3,
        adjudication_decisions: 0,
      });
      expect(await countSubjectsByStatus(db)).toEqual([]);
      expect(await db.transaction().execute((trx) => truncateTablesCounting(trx, []))).toEqual({});
    });
  });
}
