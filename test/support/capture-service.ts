import { afterAll, beforeAll } from 'vitest';
import { photo } from '../biometrics/helpers.js';
import { bootForTest } from './databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from './extractor.js';

type Booted = Awaited<ReturnType<typeof bootForTest>>;

/**
 * A service on PGlite with the real shared extraction pool, for suites that drive CaptureSession in process; the
 * pool is warmed before any capture (a cold first analysis under a heavy load took longer than the idle limit of
 * 30 s, and the first capture then ended as if nobody had been seen). Registers its own beforeAll/afterAll;
 * call `booted()` inside a test.
 */
export function captureServiceForSuite(): () => Booted {
  let booted: Booted | undefined;
  beforeAll(async () => {
    booted = await bootForTest('pglite', {}, { createExtractor: sharedExtractorFactory() });
    await (await booted.services.extractors.get()).analyseFace(photo('labelled/franck/franck_02159.jpg'), {
      checks: true,
    });
  });
  afterAll(async () => {
    await booted?.close();
    await closeSharedExtractor();
  });
  return () => booted!;
}

/** The operation row a capture recorded (its result's operationUuid), as stored. */
export function storedOperation(booted: Booted, operationUuid: string | undefined) {
  return booted.services.ctx.db
    .selectFrom('operations')
    .selectAll()
    .where('uuid', '=', operationUuid!)
    .executeTakeFirstOrThrow();
}
