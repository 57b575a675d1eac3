// The capture sessions' repository over both dialects: a row comes back decoded (events and result as values,
// timestamps as Dates); only the capture that owns an unfinished row writes it; a settlement appends its event
// to the stored ones, and takes a lost capture only past its deadline with its node silent.
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../src/db/json.js';
import type { Database } from '../../src/db/tables.js';
import {
  deleteCapturesFinishedBefore,
  findCaptureSession,
  listCaptureHandles,
  settleUnfinishedCaptures,
  updateUnfinishedCapture,
  upsertCaptureSession,
} from '../../src/db/repositories/capture.js';
import { dialects } from '../support/databases.js';
import { openMigratedDatabase } from '../support/migrated-database.js';

const at = new Date('2026-06-01T12:00:00.000Z');
const started = { at: at.toISOString(), type: 'STARTED', purpose: 'CHECK' };
const row = (captureId: string, nodeId = 'node-a') => ({
  capture_id: captureId,
  node_id: nodeId,
  account_id: null,
  purpose: 'CHECK',
  state: 'WAITING_MEDIA',
  events: json([started]),
  result: json(null),
  started_at: at,
  updated_at: at,
  finished_at: null,
  deadline_at: new Date(at.getTime() + 60_000),
});

for (const dialect of dialects) {
  describe(`capture repository on ${dialect}`, () => {
    let db: Kysely<Database>;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ db, close } = await openMigratedDatabase(dialect));
    }, 120_000);
    afterAll(async () => close?.());

    it('answers a capture decoded, and takes writes only from its own unfinished capture', async () => {
      const first = crypto.randomUUID();
      const second = crypto.randomUUID();
      await upsertCaptureSession(db, 1, 12, row(first));
      await upsertCaptureSession(db, 1, 11, row(crypto.randomUUID()));
      await upsertCaptureSession(db, 1, 12, row(second)); // a new connect on the handle replaces the row
      const read = await findCaptureSession(db, 1, 12);
      expect(read).toMatchObject({ capture_id: second, events: [started], result: null, finished_at: null });
      expect(read!.deadline_at).toBeInstanceOf(Date);
      expect(read!.deadline_at.getTime()).toBe(at.getTime() + 60_000);
      expect(
        await updateUnfinishedCapture(db, { sessionId: 1, handleId: 12, captureId: first }, { state: 'CAPTURING' }),
      ).toBe(false);
      expect(
        await updateUnfinishedCapture(
          db,
          { sessionId: 1, handleId: 12, captureId: second },
          { state: 'DONE', result: json({ status: 'SUCCESS' }), finished_at: at },
        ),
      ).toBe(true);
      expect(
        await updateUnfinishedCapture(db, { sessionId: 1, handleId: 12, captureId: second }, { state: 'FAILED' }),
      ).toBe(false);
      expect(await findCaptureSession(db, 1, 12)).toMatchObject({
        state: 'DONE',
        result: { status: 'SUCCESS' },
        finished_at: at,
      });
      expect(await listCaptureHandles(db, 1)).toEqual([11, 12]);
      expect(await listCaptureHandles(db, 1, 12)).toEqual([12]);
    });

    it('settles the unfinished captures of a session with the event appended, and a lost one only when its node is silent', async () => {
      const now = new Date(at.getTime() + 120_000);
      const failed = { at: now.toISOString(), type: 'FAILED', status: 'FAILED', reason: 'stopped' };
      expect(
        await settleUnfinishedCaptures(db, { sessionId: 1 }, { status: 'FAILED', reason: 'stopped' }, failed, now),
      ).toBe(1); // handle 12 is DONE
      const settled = await findCaptureSession(db, 1, 11);
      expect(settled).toMatchObject({
        state: 'FAILED',
        result: { status: 'FAILED', reason: 'stopped' },
        events: [started, failed],
      });
      expect(settled!.finished_at).toEqual(now);

      await upsertCaptureSession(db, 2, 21, row(crypto.randomUUID(), 'node-b'));
      await db
        .insertInto('service_nodes')
        .values({
          node_id: 'node-b',
          hostname: 'b',
          version: 't',
          runtime: 'node',
          started_at: at,
          last_seen_at: new Date(now.getTime() - 1000),
        })
        .execute();
      const lost = { lost: { aliveSince: new Date(now.getTime() - 30_000) } };
      expect(await settleUnfinishedCaptures(db, lost, { status: 'FAILED', reason: 'NODE_LOST' }, failed, now)).toBe(0);
      await db
        .updateTable('service_nodes')
        .set({ last_seen_at: new Date(now.getTime() - 60_000) })
        .where('node_id', '=', 'node-b')
        .execute();
      expect(await settleUnfinishedCaptures(db, lost, { status: 'FAILED', reason: 'NODE_LOST' }, failed, now)).toBe(1);
      expect(await findCaptureSession(db, 2, 21)).toMatchObject({ state: 'FAILED', result: { reason: 'NODE_LOST' } });

      await deleteCapturesFinishedBefore(db, new Date(now.getTime() + 1));
      expect(await listCaptureHandles(db, 1)).toEqual([]);
    });
  });
}
