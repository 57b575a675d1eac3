// The rows behind captures readable from any node (docs/gateway-capture.md, "Across nodes"), on PGlite
// (serviceDialects; the statements run over both in test/db/repositories-capture.test.ts): what a finished capture keeps and for how long, and that only its own capture writes a row.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootForTest, serviceDialects } from '../support/databases.js';
import { CaptureStore, KEEP_FINISHED_MS, type CaptureSnapshot } from '../../src/services/capture/capture-store.js';
import type { CaptureEvent } from '../../src/services/capture/capture-types.js';

for (const dialect of serviceDialects) {
  describe(`capture store (${dialect})`, () => {
    let clock = new Date('2026-11-26T12:00:00Z').getTime();
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    let store: CaptureStore;
    beforeAll(async () => {
      booted = await bootForTest(dialect, {}, { now: () => new Date(clock) });
      store = booted.services.gateway.captures.store;
    });
    afterAll(async () => booted?.close());

    const started: CaptureEvent = {
      at: '2026-11-26T12:00:00.000Z',
      type: 'STARTED',
      purpose: 'CHECK',
      timeoutSeconds: 30,
    };
    const snapshot = (over: Partial<CaptureSnapshot> = {}): CaptureSnapshot => ({
      state: 'WAITING_MEDIA',
      events: [started],
      result: null,
      over: false,
      deadlineAt: new Date(clock + 90_000),
      ...over,
    });

    it('keeps a finished capture readable for 10 minutes, then the heartbeat prunes it', async () => {
      await store.admit({
        sessionId: 11,
        handleId: 12,
        captureId: crypto.randomUUID(),
        owner: 'account:7',
        accountId: 7,
        purpose: 'CHECK',
        snapshot: snapshot({ state: 'DONE', over: true, result: { status: 'SUCCESS' } }),
      });
      expect(await store.read(11, 12)).toMatchObject({
        over: true,
        accountId: 7,
        view: { state: 'DONE', purpose: 'CHECK', events: [started], result: { status: 'SUCCESS' } },
      });
      clock += KEEP_FINISHED_MS;
      expect(await store.read(11, 12)).toMatchObject({ view: { state: 'DONE' } });
      clock += 1000;
      expect(await store.read(11, 12)).toBeUndefined();
      await store.prune();
      expect(
        await booted.services.ctx.db
          .selectFrom('capture_sessions')
          .select('session_id')
          .where('session_id', '=', 11)
          .execute(),
      ).toEqual([]);
    });

    it('takes writes only from the capture that owns the row, and only while it is unfinished', async () => {
      const first = crypto.randomUUID();
      await store.admit({
        sessionId: 21,
        handleId: 22,
        captureId: first,
        owner: 'client:store-test',
        accountId: null,
        purpose: 'CHECK',
        snapshot: snapshot(),
      });
      // A new connect on the handle replaces the capture: the old one's late writes change nothing.
      const second = crypto.randomUUID();
      await store.admit({
        sessionId: 21,
        handleId: 22,
        captureId: second,
        owner: 'client:store-test',
        accountId: null,
        purpose: 'VERIFY',
        snapshot: snapshot(),
      });
      expect(await store.write(21, 22, first, snapshot({ state: 'CAPTURING' }))).toBe(false);
      expect(await store.write(21, 22, second, snapshot({ state: 'CAPTURING' }))).toBe(true);
      // A stop on another node settles it; the capture's own ending, a moment later, is refused.
      await store.stopSession(21, 'stopped by the client');
      expect(
        await store.write(21, 22, second, snapshot({ state: 'DONE', over: true, result: { status: 'SUCCESS' } })),
      ).toBe(false);
      const read = await store.read(21, 22);
      expect(read).toMatchObject({
        over: true,
        view: { state: 'FAILED', purpose: 'VERIFY', result: { status: 'FAILED', reason: 'stopped by the client' } },
      });
      expect(read!.view.events.map((e) => e.type)).toEqual(['STARTED', 'FAILED']);
    });

    it('settles an unfinished capture as NODE_LOST only past its deadline and with its node silent', async () => {
      const db = booted.services.ctx.db;
      // Another node's capture (named rows rather than this node's own, which its heartbeat keeps writing).
      await db
        .insertInto('service_nodes')
        .values({
          node_id: 'other-node',
          hostname: 'other',
          version: 'test',
          runtime: 'node',
          started_at: new Date(clock),
          last_seen_at: new Date(clock),
        })
        .execute();
      await store.admit({
        sessionId: 31,
        handleId: 32,
        captureId: crypto.randomUUID(),
        owner: 'client:store-test',
        accountId: null,
        purpose: 'CHECK',
        snapshot: snapshot(),
      });
      await db.updateTable('capture_sessions').set({ node_id: 'other-node' }).where('session_id', '=', 31).execute();
      clock += 60_000;
      expect(await store.read(31, 32)).toMatchObject({ over: false, view: { state: 'WAITING_MEDIA' } });
      // Past the deadline, but its node reported in a moment ago: not lost.
      clock += 60_000;
      await db
        .updateTable('service_nodes')
        .set({ last_seen_at: new Date(clock - 1000) })
        .where('node_id', '=', 'other-node')
        .execute();
      expect(await store.read(31, 32)).toMatchObject({ over: false, view: { state: 'WAITING_MEDIA' } });
      // Its node silent for longer than NODE_ALIVE_SECONDS: lost, settled in the row for every reader.
      clock += 91_000;
      expect(await store.read(31, 32)).toMatchObject({
        over: true,
        view: { state: 'FAILED', result: { status: 'FAILED', reason: 'NODE_LOST' } },
      });
      const row = await db
        .selectFrom('capture_sessions')
        .select(['state', 'finished_at', 'events'])
        .where('session_id', '=', 31)
        .executeTakeFirstOrThrow();
      expect(row.finished_at).not.toBeNull();
      expect((row.events as CaptureEvent[]).map((e) => e.type)).toEqual(['STARTED', 'FAILED']);
    });

    it("admits an account's captures up to its cap, keeps the last places for accounts that hold none, and stops at the total", async () => {
      // Other rows of this suite are finished or past their deadlines by now; counted from a clean table.
      await booted.services.ctx.db.deleteFrom('capture_sessions').execute();
      const { BIMS_CAPTURES_PER_ACCOUNT: perAccount, BIMS_CAPTURES_TOTAL: total } = booted.config;
      const admit = (owner: string, sessionId: number) =>
        store
          .admit({
            sessionId,
            handleId: 1,
            captureId: crypto.randomUUID(),
            owner,
            accountId: null,
            purpose: 'CHECK',
            snapshot: snapshot({ deadlineAt: new Date(clock + 90_000) }),
          })
          .then(
            () => 'admitted',
            (error: { code?: string; extras?: { retryAfterSeconds?: number } }) =>
              `${error.code} after ${error.extras?.retryAfterSeconds} s`,
          );
      let session = 1000;
      // One account: its cap, then 429; a new connect on a handle it holds replaces that capture, not counted twice.
      for (let i = 0; i < perAccount; i++) expect(await admit('account:1', ++session)).toBe('admitted');
      expect(await admit('account:1', ++session)).toBe('too-many-requests after 10 s');
      expect(await admit('account:1', session - 1)).toBe('admitted');
      // More accounts take what is left but the reserve (as large as one account's cap) ...
      let owner = 2;
      let held = perAccount;
      while (held < total - perAccount) {
        for (let i = 0; i < perAccount && held < total - perAccount; i++, held++)
          expect(await admit(`account:${owner}`, ++session)).toBe('admitted');
        owner++;
      }
      // ... which an account holding some may not enter, and accounts holding none may, one each.
      expect(await admit('account:2', ++session)).toBe('too-many-requests after 10 s');
      for (let i = 0; i < perAccount; i++) expect(await admit(`newcomer:${i}`, ++session)).toBe('admitted');
      expect(await admit('newcomer:last', ++session)).toBe('service-unavailable after 10 s');
      // A capture that ends gives its place back.
      await store.stopSession(1001, 'stopped by the client');
      expect(await admit('newcomer:last', ++session)).toBe('admitted');
      // Past its deadline (its node gone), an unfinished capture no longer counts either.
      clock += 91_000;
      expect(await admit('account:1', ++session)).toBe('admitted');
    });
  });
}
