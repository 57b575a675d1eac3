// The gateway sessions' repository over both dialects: owners counted, a handle slot
// taken only on the owner's session and below the cap, handles gone with their session, old rows listed for the
// comparison with Janus; and the unfinished captures an owner runs.
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../src/db/json.js';
import type { Database } from '../../src/db/tables.js';
import {
  countGatewaySessions,
  deleteGatewaySession,
  deleteGatewaySessions,
  findGatewayHandle,
  findGatewaySession,
  addGatewayHandle,
  insertGatewayHandle,
  insertGatewaySession,
  listGatewaySessionIds,
  listGatewaySessionsMadeBefore,
} from '../../src/db/repositories/gateway-sessions.js';
import { countUnfinishedCaptures, upsertCaptureSession } from '../../src/db/repositories/capture.js';
import { dialects } from '../support/databases.js';
import { openMigratedDatabase } from '../support/migrated-database.js';

const at = new Date('2026-06-01T12:00:00.000Z');

for (const dialect of dialects) {
  describe(`gateway sessions repository on ${dialect}`, () => {
    let db: Kysely<Database>;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ db, close } = await openMigratedDatabase(dialect));
    });
    afterAll(async () => close?.());

    const made = (owner: string, sessionId: number, createdAt = at) =>
      insertGatewaySession(db, { sessionId, owner, nodeId: 'node-a', createdAt });

    it("counts an owner's sessions and all, and knows whose each is", async () => {
      await made('account:1', 101);
      await made('account:1', 102);
      await made('client:app', 103);
      expect(await countGatewaySessions(db, 'account:1')).toEqual({ mine: 2, total: 3 });
      expect(await countGatewaySessions(db, 'client:app')).toEqual({ mine: 1, total: 3 });
      expect(await countGatewaySessions(db, 'account:9')).toEqual({ mine: 0, total: 3 });
      expect(await findGatewaySession(db, 102)).toEqual({ owner: 'account:1', handles: 0 });
      expect(await findGatewaySession(db, 999)).toBeUndefined();
      expect((await listGatewaySessionIds(db, 'account:1')).sort()).toEqual([101, 102]);
    });

    it("adds a handle only to the owner's session and below the cap; handles go with their session", async () => {
      await made('account:2', 201);
      const handle = (handleId: number) => ({ sessionId: 201, handleId, plugin: 'janus.plugin.videoroom' });
      expect(await addGatewayHandle(db, handle(2010), 'account:3', 2)).toBe(false);
      expect(await addGatewayHandle(db, handle(2011), 'account:2', 2)).toBe(true);
      expect(await addGatewayHandle(db, handle(2012), null, 2)).toBe(true);
      expect(await addGatewayHandle(db, handle(2013), 'account:2', 2)).toBe(false);
      expect(await findGatewaySession(db, 201)).toEqual({ owner: 'account:2', handles: 2 });
      expect(await addGatewayHandle(db, { ...handle(9991), sessionId: 999 }, null, 2)).toBe(false);
      expect(await findGatewayHandle(db, 201, 2011)).toEqual({ owner: 'account:2', plugin: 'janus.plugin.videoroom' });
      expect(await findGatewayHandle(db, 201, 2010)).toBeUndefined();
      expect(await findGatewayHandle(db, 201, 2013)).toBeUndefined();
      // A session recorded with its first handle (createAndAttach) counts it.
      await insertGatewaySession(db, { sessionId: 202, owner: 'account:2', nodeId: 'a', createdAt: at, handles: 1 });
      await insertGatewayHandle(db, 202, 2021, 'janus.plugin.echotest');
      expect(await findGatewaySession(db, 202)).toEqual({ owner: 'account:2', handles: 1 });
      await deleteGatewaySession(db, 201);
      expect(await findGatewayHandle(db, 201, 2011)).toBeUndefined();
      expect(await db.selectFrom('gateway_handles').selectAll().where('session_id', '=', 201).execute()).toEqual([]);
    });

    it('lists the sessions recorded before a time, and deletes rows by session', async () => {
      await made('account:4', 401, new Date(at.getTime() - 120_000));
      await made('account:4', 402, at);
      const listed = await listGatewaySessionsMadeBefore(db, new Date(at.getTime() - 60_000));
      expect(listed).toContain(401);
      expect(listed).not.toContain(402);
      expect(await deleteGatewaySessions(db, [401, 4242])).toBe(1);
      expect(await deleteGatewaySessions(db, [])).toBe(0);
      expect(await findGatewaySession(db, 401)).toBeUndefined();
    });

    it('counts the unfinished captures within their deadline, by owner, leaving out the handle being replaced', async () => {
      const capture = (owner: string | null, sessionId: number, over: { finished?: boolean; late?: boolean } = {}) =>
        upsertCaptureSession(db, sessionId, 1, {
          capture_id: crypto.randomUUID(),
          node_id: 'node-a',
          account_id: null,
          owner,
          purpose: 'CHECK',
          state: over.finished ? 'DONE' : 'WAITING_MEDIA',
          events: json([]),
          result: json(null),
          started_at: at,
          updated_at: at,
          finished_at: over.finished ? at : null,
          deadline_at: new Date(at.getTime() + (over.late ? -1000 : 60_000)),
        });
      await capture('account:5', 501);
      await capture('account:5', 502);
      await capture('account:5', 503, { finished: true });
      await capture('account:5', 504, { late: true });
      await capture('account:6', 601);
      await capture(null, 701);
      const none = { sessionId: 0, handleId: 0 };
      expect(await countUnfinishedCaptures(db, 'account:5', at, none)).toEqual({ mine: 2, total: 4 });
      expect(await countUnfinishedCaptures(db, 'account:5', at, { sessionId: 502, handleId: 1 })).toEqual({
        mine: 1,
        total: 3,
      });
      expect(await countUnfinishedCaptures(db, 'account:6', at, none)).toEqual({ mine: 1, total: 4 });
    });
  });
}
