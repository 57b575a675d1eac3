import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootForTest } from '../support/databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { photo } from '../biometrics/helpers.js';
import { CaptureSession, type CaptureMedia } from '../../src/services/capture/capture-session.js';
import { InitParams } from '../../src/schemas/gateway.js';

/**
 * A capture session fed frames as Node Buffers, the way the sidecar's decoder hands them over in-process (the
 * bench runs it so): the frames it keeps must survive their trip through the extraction pool, whose transfer
 * to a worker would otherwise detach them and leave the operation an empty image.
 */
let booted: Awaited<ReturnType<typeof bootForTest>>;
beforeAll(async () => {
  booted = await bootForTest('pglite', {}, { createExtractor: sharedExtractorFactory() });
});
afterAll(async () => {
  await booted?.close();
  await closeSharedExtractor();
});

function frames(bytes: Uint8Array, count: number): CaptureMedia {
  return {
    async *frames() {
      for (let i = 0; i < count; i++) yield Buffer.from(bytes);
    },
    release: async () => {},
  };
}

describe('capture session', () => {
  it('runs the operation on the frames it selected, even when they came as Buffers', async () => {
    const params = InitParams.parse({ kind: 'FV', purpose: 'CHECK', livenessFrames: 2, selectFrames: 2 });
    const events: string[] = [];
    const session = new CaptureSession(booted.services, params, { principal: { accountId: null, username: 'admin', role: 'ADMIN', via: 'basic' }, surface: 'admin' },
      frames(photo('labelled/franck/franck_02159.jpg'), 4), (e) => events.push(e.type));
    session.start();
    await session.finished;
    expect(session.result, JSON.stringify(session.result)).toMatchObject({ status: 'SUCCESS', operationUuid: expect.any(String) });
    expect(events).toEqual(['STARTED', 'MEDIA', 'FACE_FOUND', 'FACE_FOUND', 'PROCESSING', 'DONE']);
    const row = await booted.services.ctx.db.selectFrom('operations').selectAll().where('uuid', '=', session.result!.operationUuid!).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ type: 'CHECK', status: 'SUCCESS' });
  }, 60_000);

  it('a stream that ends before a result is FAILED, without an operation', async () => {
    const params = InitParams.parse({ kind: 'FV', purpose: 'CHECK' });
    const session = new CaptureSession(booted.services, params, { principal: { accountId: null, username: 'admin', role: 'ADMIN', via: 'basic' }, surface: 'admin' },
      frames(photo('labelled/franck/franck_02159.jpg'), 0));
    session.start();
    await session.finished;
    expect(session.state).toBe('FAILED');
    expect(session.result).toMatchObject({ status: 'FAILED', reason: 'the media stream ended before a result' });
  });
});
