import { describe, expect, it } from 'vitest';
import { captureServiceForSuite } from '../support/capture-service.js';
import { steppedCamera } from '../support/stepped-camera.js';
import { writeGenerationOf } from '../../src/db/write-generation.js';
import { InitParams } from '../../src/schemas/gateway-init.js';
import { PROGRESS_WRITE_MS } from '../../src/services/capture/capture-writer.js';

/**
 * The node running a capture answers its client from what it holds (CaptureRegistry.view): the progress its row
 * gathers for up to a second (CaptureWriter) is read at once on this node, the row decides the rest, and the
 * outcome is read once the row holds it, alike on every node.
 */
const booted = captureServiceForSuite();

const user = {
  principal: { accountId: 7, username: 'live-view', role: 'USER' as const, via: 'basic' as const },
  surface: 'user' as const,
};

/** A liveness CHECK capture of the suite's user, fed frame by frame from a stepped camera. */
async function startCheck(sessionId: number, livenessFrames: number) {
  const ids = { sessionId, handleId: 1 };
  const { media, next } = steppedCamera();
  const session = await booted().services.gateway.captures.start({
    ...ids,
    params: InitParams.parse({
      kind: 'FV',
      purpose: 'CHECK',
      livenessFrames,
      selectFrames: 1,
      detectLiveness: true,
      timeoutSeconds: 60,
    }),
    starter: { services: booted().services, caller: user },
    media,
  });
  /** Hands over the next frame and waits until the capture has analysed it (or is over). */
  const nextAnalysed = async () => {
    const analysed = session.metrics.framesAnalysed;
    await next();
    for (let i = 0; i < 30_000 && session.metrics.framesAnalysed === analysed && !session.isOver; i++)
      await new Promise((resolve) => setTimeout(resolve, 2));
  };
  return { ids, session, next, nextAnalysed };
}

describe('a capture read on the node that runs it', () => {
  it('shows each event as it happens, before its row is written, and the outcome only once the row holds it', async () => {
    const registry = booted().services.gateway.captures;
    const { ids, session, next, nextAnalysed } = await startCheck(9_100_001, 4);
    const ahead: number[] = [];
    for (let frame = 0; frame < 3 && !session.isOver; frame++) {
      await nextAnalysed();
      if (session.isOver || session.state === 'PROCESSING') break;
      // At once: the row may still lack the frame's event (written within a second), this node's reader does not.
      const events = JSON.parse(JSON.stringify(session.events));
      const [view, row] = await Promise.all([
        registry.view(ids.sessionId, ids.handleId, 'account:7'),
        registry.store.read(ids.sessionId, ids.handleId),
      ]);
      expect(view?.over).toBe(false);
      expect(view?.view.events.slice(0, events.length)).toEqual(events);
      ahead.push(view!.view.events.length - row!.view.events.length);
    }
    // On PGlite (one node) the running capture is not read from the database: polls cost no statement.
    if (!session.isOver) {
      const writes = writeGenerationOf(booted().services.ctx.db)!;
      const reading = writes.statements;
      for (let i = 0; i < 20; i++) await booted().services.gateway.captures.store.read(ids.sessionId, ids.handleId);
      const read = writes.statements - reading;
      const polling = writes.statements;
      for (let i = 0; i < 20; i++) await registry.view(ids.sessionId, ids.handleId, 'account:7');
      expect(read).toBeGreaterThanOrEqual(20);
      expect(writes.statements - polling).toBeLessThan(read / 3);
    }
    // The rows were behind at least once (else this proved nothing about reading from memory).
    expect(Math.max(...ahead)).toBeGreaterThan(0);
    // Another account reads nothing.
    expect(await registry.view(ids.sessionId, ids.handleId, 'account:8')).toBeUndefined();

    // The rest of the frames it needs.
    for (let i = 0; i < 10 && !session.isOver; i++) await Promise.race([next(), session.finished]);
    await session.finished;
    expect(session.state, JSON.stringify(session.result)).toBe('DONE');
    let final = await registry.view(ids.sessionId, ids.handleId, 'account:7');
    for (let i = 0; i < 500 && !final?.over; i++) {
      // Until the row holds the outcome, this node does not show it either.
      expect(final?.view.events.map((e) => e.type)).not.toContain('DONE');
      await new Promise((resolve) => setTimeout(resolve, 10));
      final = await registry.view(ids.sessionId, ids.handleId, 'account:7');
    }
    const row = await registry.store.read(ids.sessionId, ids.handleId);
    expect(final?.over).toBe(true);
    expect(final?.view).toEqual(row?.view);
    expect(row?.view.events).toEqual(JSON.parse(JSON.stringify(session.events)));
  }, 120_000);

  it('on PGlite writes its row at its changes of state only, and getSession shows its progress from memory', async () => {
    const registry = booted().services.gateway.captures;
    expect(registry.store.soleNode).toBe(true);
    const { ids, session, next, nextAnalysed } = await startCheck(9_100_002, 6);
    for (let frame = 0; frame < 3 && !session.isOver; frame++) await nextAnalysed();
    expect(session.state).toBe('CAPTURING');
    // Longer than a progress write's window: the row still holds only the changes of state.
    await new Promise((resolve) => setTimeout(resolve, PROGRESS_WRITE_MS + 300));
    const progress = session.events.filter((e) => !['STARTED', 'MEDIA'].includes(e.type));
    expect(progress.length).toBeGreaterThan(0);
    const row = await registry.store.read(ids.sessionId, ids.handleId);
    expect(row?.view.events.map((e) => e.type)).toEqual(['STARTED', 'MEDIA']);
    // getSession (administrators) shows every event so far, as the client's own reads do.
    const shown = (await registry.events(ids.sessionId)).map((e) => e.plugindata?.data);
    expect(shown).toEqual(JSON.parse(JSON.stringify(session.events)));

    for (let i = 0; i < 10 && !session.isOver; i++) await Promise.race([next(), session.finished]);
    await session.finished;
    expect(session.state, JSON.stringify(session.result)).toBe('DONE');
    let final = await registry.view(ids.sessionId, ids.handleId, 'account:7');
    for (let i = 0; i < 500 && !final?.over; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      final = await registry.view(ids.sessionId, ids.handleId, 'account:7');
    }
    // The outcome's write carried every event.
    const done = await registry.store.read(ids.sessionId, ids.handleId);
    expect(done?.over).toBe(true);
    expect(done?.view.events).toEqual(JSON.parse(JSON.stringify(session.events)));
    expect((await registry.events(ids.sessionId)).map((e) => e.plugindata?.data)).toEqual(done?.view.events);
  }, 120_000);
});
