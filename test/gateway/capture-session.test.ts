import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { captureServiceForSuite, storedOperation } from '../support/capture-service.js';
import { PHOTOS, photo } from '../biometrics/helpers.js';
import { CaptureSession } from '../../src/services/capture/capture-session.js';
import { type CaptureMedia } from '../../src/services/capture/capture-types.js';
import { InitParams } from '../../src/schemas/gateway-init.js';
import { encodePng } from '../../src/biometrics/image/encode.js';

/**
 * A capture session fed frames as Node Buffers, the way the sidecar's decoder hands them over in-process (the
 * bench runs it so): the frames it keeps must survive their trip through the extraction pool, whose transfer
 * to a worker would otherwise detach them and leave the operation an empty image.
 */
const booted = captureServiceForSuite();

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
    const session = new CaptureSession(
      booted().services,
      params,
      { principal: { accountId: null, username: 'admin', role: 'ADMIN', via: 'basic' }, surface: 'admin' },
      frames(photo('labelled/franck/franck_02159.jpg'), 4),
      (e) => events.push(e.type),
    );
    session.start();
    await session.finished;
    expect(session.result, JSON.stringify(session.result)).toMatchObject({
      status: 'SUCCESS',
      operationUuid: expect.any(String),
    });
    expect(events).toEqual(['STARTED', 'MEDIA', 'FACE_FOUND', 'FACE_FOUND', 'PROCESSING', 'DONE']);
    const row = await storedOperation(booted(), session.result!.operationUuid);
    expect(row).toMatchObject({ type: 'CHECK', status: 'SUCCESS' });
  }, 60_000);

  it('a stream that ends before a result is FAILED, without an operation', async () => {
    const params = InitParams.parse({ kind: 'FV', purpose: 'CHECK' });
    const session = new CaptureSession(
      booted().services,
      params,
      { principal: { accountId: null, username: 'admin', role: 'ADMIN', via: 'basic' }, surface: 'admin' },
      frames(photo('labelled/franck/franck_02159.jpg'), 0),
    );
    session.start();
    await session.finished;
    expect(session.state).toBe('FAILED');
    expect(session.result).toMatchObject({ status: 'FAILED', reason: 'the media stream ended before a result' });
  });
});

const admin = {
  principal: { accountId: null, username: 'admin', role: 'ADMIN' as const, via: 'basic' as const },
  surface: 'admin' as const,
};

/** Run one capture on `count` copies of a frame and give its result and events. */
async function capture(params: Record<string, unknown>, bytes: Uint8Array, count = 4) {
  const events: string[] = [];
  const session = new CaptureSession(booted().services, InitParams.parse(params), admin, frames(bytes, count), (e) =>
    events.push(e.type),
  );
  session.start();
  await session.finished;
  return { result: session.result!, events, state: session.state };
}

/**
 * A photo as a small camera would give it: shrunk to a sixteenth and blown up again, so its face is blurred to a
 * sharpness of about 7, where genuine scores start to fail (docs/extraction.md; a twelfth, 12, still matches).
 */
function blurred(rel: string): Uint8Array {
  return new Uint8Array(
    execFileSync('ffmpeg', [
      '-hide_banner',
      '-loglevel',
      'error',
      '-i',
      PHOTOS + rel,
      '-vf',
      'scale=iw/16:-2,scale=iw*16:-2',
      '-f',
      'image2pipe',
      '-c:v',
      'mjpeg',
      'pipe:1',
    ]),
  );
}

describe('per-session overrides of the Advanced init params', () => {
  const franck = 'labelled/franck/franck_02159.jpg';
  const franckAgain = 'labelled/franck/franck_02221.jpg';

  it('matching.threshold: a VERIFY the settings accept fails at a stricter threshold of the session', async () => {
    const enrolled = await capture(
      { kind: 'FV', purpose: 'ENROLL', subjectId: 'override-verify', livenessFrames: 1 },
      photo(franck),
    );
    expect(enrolled.result, JSON.stringify(enrolled.result)).toMatchObject({
      status: 'SUCCESS',
      subjectStatus: 'ENROLLED',
    });
    const plain = await capture(
      { kind: 'FV', purpose: 'VERIFY', subjectId: 'override-verify', livenessFrames: 1 },
      photo(franckAgain),
    );
    expect(plain.result, JSON.stringify(plain.result)).toMatchObject({ status: 'SUCCESS', score: expect.any(Number) });
    const strict = await capture(
      {
        kind: 'FV_ADVANCED',
        purpose: 'VERIFY',
        subjectId: 'override-verify',
        livenessFrames: 1,
        overrides: { 'matching.threshold': plain.result.score! + 1 },
      },
      photo(franckAgain),
    );
    expect(strict.result, JSON.stringify(strict.result)).toMatchObject({ status: 'MATCH_NOT_FOUND' });
    const row = await booted()
      .services.ctx.db.selectFrom('operations')
      .select(['status', 'threshold'])
      .where('uuid', '=', strict.result.operationUuid!)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'MATCH_NOT_FOUND', threshold: plain.result.score! + 1 });
  }, 120_000);

  it('quality.face.minimum: a blurred face the settings refuse passes, frame gates and operation alike, at a lower minimum', async () => {
    const frame = blurred(franck);
    const [analysis] = await (await booted().services.extractors.get())
      .analyseFace(frame, { checks: true })
      .then((a) => [a]);
    const quality = analysis!.faces[0]!.quality;
    // The premise: one face, found, below the setting's minimum (50).
    expect(analysis!.faces).toHaveLength(1);
    expect(quality).toBeLessThan(50);
    const plain = await capture({ kind: 'FV', purpose: 'CHECK', livenessFrames: 1, detectLiveness: false }, frame);
    expect(plain.result).toMatchObject({ status: 'FAILED', reason: 'the media stream ended before a result' });
    expect(plain.events).toContain('LOW_QUALITY');
    const lenient = await capture(
      {
        kind: 'FV_ADVANCED',
        purpose: 'CHECK',
        livenessFrames: 1,
        detectLiveness: false,
        overrides: { 'quality.face.minimum': Math.floor(quality) - 1 },
      },
      frame,
    );
    expect(lenient.result, JSON.stringify(lenient.result)).toMatchObject({
      status: 'SUCCESS',
      operationUuid: expect.any(String),
    });
    // ENROLL judges the selected frame again: it too is held to the session's minimum, not the setting's.
    const enrol = await capture(
      {
        kind: 'FV_ADVANCED',
        purpose: 'ENROLL',
        subjectId: 'override-quality',
        livenessFrames: 1,
        detectLiveness: false,
        overrides: {
          'quality.face.minimum': Math.floor(quality) - 1,
          'deduplication.adjudicationThreshold': 200,
          'deduplication.duplicateThreshold': 200,
        },
      },
      frame,
    );
    expect(enrol.result, JSON.stringify(enrol.result)).toMatchObject({ status: 'SUCCESS', subjectStatus: 'ENROLLED' });
  }, 120_000);

  it("deduplication thresholds: a second enrolment of one person is refused under the settings and enrolled under the session's", async () => {
    await capture({ kind: 'FV', purpose: 'ENROLL', subjectId: 'override-dedup-a', livenessFrames: 1 }, photo(franck));
    const plain = await capture(
      { kind: 'FV', purpose: 'ENROLL', subjectId: 'override-dedup-b', livenessFrames: 1 },
      photo(franckAgain),
    );
    expect(plain.result.status, JSON.stringify(plain.result)).toMatch(/^(DUPLICATE_FOUND|PENDING_ADJUDICATION)$/);
    const lenient = await capture(
      {
        kind: 'FV_ADVANCED',
        purpose: 'ENROLL',
        subjectId: 'override-dedup-c',
        livenessFrames: 1,
        overrides: { 'deduplication.duplicateThreshold': 200, 'deduplication.adjudicationThreshold': 200 },
      },
      photo(franckAgain),
    );
    expect(lenient.result, JSON.stringify(lenient.result)).toMatchObject({
      status: 'SUCCESS',
      subjectStatus: 'ENROLLED',
    });
  }, 120_000);
});

/** A recording as the sidecar's Opus decoder hands it over: 16 kHz mono s16le, in 100 ms chunks. */
function pcmChunks(speechPath: string): Uint8Array[] {
  const pcm = execFileSync('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-i',
    new URL(`../fixtures/speech/${speechPath}`, import.meta.url).pathname,
    '-t',
    '12',
    '-ac',
    '1',
    '-ar',
    '16000',
    '-f',
    's16le',
    'pipe:1',
  ]);
  const chunks: Uint8Array[] = [];
  for (let at = 0; at + 3200 <= pcm.length; at += 3200) chunks.push(new Uint8Array(pcm.subarray(at, at + 3200)));
  return chunks;
}

describe('multimodal capture', () => {
  it('waits for minSpeechMs of speech, then enrols the face and the voice together', async () => {
    // Someone the other tests of this file did not enrol (they enrol franck): this enrolment is no duplicate.
    const face = photo('labelled/cage/cage.jpg');
    const audio = pcmChunks('asterisk-en_US_f_Allison/demo-instruct.wav');
    const media: CaptureMedia = {
      // The camera runs on (a frame every 50 ms) while the voice is heard in real time.
      async *frames(signal) {
        for (let i = 0; i < 400 && !signal.aborted; i++) {
          yield face;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      },
      async *audio(signal) {
        for (const chunk of audio) {
          if (signal.aborted) return;
          yield chunk;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      },
      release: async () => {},
    };
    const events: { type: string; speechMs?: number }[] = [];
    const params = InitParams.parse({
      kind: 'MULTIMODAL',
      purpose: 'ENROLL',
      subjectId: 'multimodal-stream',
      livenessFrames: 1,
      minSpeechMs: 3000,
      timeoutSeconds: 60,
      detectLiveness: false,
    });
    const session = new CaptureSession(booted().services, params, admin, media, (e) => events.push(e));
    session.start();
    await session.finished;
    expect(session.result, JSON.stringify(session.result)).toMatchObject({
      status: 'SUCCESS',
      subjectStatus: 'ENROLLED',
      operationUuid: expect.any(String),
    });
    const types = events.map((e) => e.type);
    // The client heard how much speech there is (KEEP_SPEAKING too when the face was ready first: timing).
    expect(types).toContain('SPEECH');
    const processing = events.find((e) => e.type === 'PROCESSING')!;
    expect(processing.speechMs).toBeGreaterThanOrEqual(3000);
    const db = booted().services.ctx.db;
    const op = await db
      .selectFrom('operations')
      .selectAll()
      .where('uuid', '=', session.result!.operationUuid!)
      .executeTakeFirstOrThrow();
    expect([...(op.modalities as string[])].sort()).toEqual(['FACE', 'VOICE']);
    const subject = await db
      .selectFrom('subjects')
      .select('id')
      .where('subject_id', '=', 'multimodal-stream')
      .executeTakeFirstOrThrow();
    const templates = await db
      .selectFrom('templates')
      .select('modality')
      .where('subject_ref', '=', subject.id)
      .execute();
    expect(templates.map((t) => t.modality).sort()).toEqual(['FACE', 'VOICE']);
    const voice = await db
      .selectFrom('voice_samples')
      .selectAll()
      .where('subject_ref', '=', subject.id)
      .executeTakeFirstOrThrow();
    expect(voice.speech_ratio).toBeGreaterThan(0);
  }, 120_000);

  it('silence never makes enough speech: the session times out with the voice in its modalities', async () => {
    const face = photo('labelled/franck/franck_02045.jpg');
    const silence = new Uint8Array(3200);
    const media: CaptureMedia = {
      async *frames(signal) {
        while (!signal.aborted) {
          yield face;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      },
      async *audio(signal) {
        while (!signal.aborted) {
          yield silence;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      },
      release: async () => {},
    };
    const params = InitParams.parse({
      kind: 'MULTIMODAL',
      purpose: 'CHECK',
      modalities: ['FACE'],
      livenessFrames: 1,
      timeoutSeconds: 5,
    });
    // CHECK takes faces only: the voice is not waited for, the face alone decides.
    const check = new CaptureSession(booted().services, params, admin, media);
    check.start();
    await check.finished;
    expect(check.result).toMatchObject({ status: 'SUCCESS' });
    const verify = new CaptureSession(
      booted().services,
      InitParams.parse({ kind: 'MULTIMODAL', purpose: 'IDENTIFY', livenessFrames: 1, timeoutSeconds: 5 }),
      admin,
      media,
    );
    verify.start();
    await verify.finished;
    expect(verify.result, JSON.stringify(verify.result)).toMatchObject({
      status: 'TIMEOUT',
      operationUuid: expect.any(String),
    });
    const op = await storedOperation(booted(), verify.result!.operationUuid);
    expect([...(op.modalities as string[])].sort()).toEqual(['FACE', 'VOICE']);
  }, 60_000);
});

describe('active liveness (init param activeLiveness)', () => {
  // Frames of one person from the Franck sequence: frontal, turned to his own left (its mirror: to his right),
  // eyes closed. See test/biometrics/active-liveness-photos.test.ts for what the pipeline measures on them.
  const frontal = photo('labelled/franck/franck_01829.jpg');
  const turnedLeft = photo('labelled/franck/franck_03909.jpg');
  const turnedRight = new Uint8Array(
    execFileSync('ffmpeg', [
      '-hide_banner',
      '-loglevel',
      'error',
      '-i',
      `${PHOTOS}labelled/franck/franck_03909.jpg`,
      '-vf',
      'hflip',
      '-f',
      'image2pipe',
      '-c:v',
      'mjpeg',
      '-q:v',
      '2',
      'pipe:1',
    ]),
  );
  const blinking = photo('labelled/franck/franck_03979.jpg');

  /**
   * A camera that does as it is told: frontal frames, and after each INSTRUCTION event frontal, the asked
   * movement, frontal. The events reach the media through the session's listener before the next frame is asked.
   */
  function obedientCamera() {
    const queue: Uint8Array[] = [];
    const events: Record<string, unknown>[] = [];
    const action = { TURN_LEFT: turnedLeft, TURN_RIGHT: turnedRight, BLINK: blinking } as Record<string, Uint8Array>;
    const onEvent = (e: Record<string, unknown>) => {
      events.push(e);
      if (e.type === 'INSTRUCTION') queue.push(frontal, action[e.instruction as string]!, frontal);
    };
    const media: CaptureMedia = {
      async *frames(signal) {
        while (!signal.aborted) yield queue.shift() ?? frontal;
      },
      release: async () => {},
    };
    return { media, events, onEvent };
  }

  it('a subject who follows every random instruction passes; the operation runs on frontal frames of the track', async () => {
    const camera = obedientCamera();
    // IDENTIFY keeps its probe images under the operation's UUID: they show which frames the operation ran on.
    const params = InitParams.parse({
      kind: 'FV',
      purpose: 'IDENTIFY',
      livenessFrames: 1,
      selectFrames: 2,
      activeLiveness: { challenges: 3 },
    });
    const session = new CaptureSession(booted().services, params, admin, camera.media, camera.onEvent);
    session.start();
    await session.finished;
    const types = camera.events.map((e) => e.type);
    console.info(
      '[capture-session] active liveness',
      JSON.stringify(camera.events.filter((e) => e.type === 'INSTRUCTION').map((e) => e.instruction)),
    );
    expect(session.result, JSON.stringify(camera.events)).toMatchObject({
      status: expect.stringMatching(/^(SUCCESS|MATCH_NOT_FOUND)$/),
      operationUuid: expect.any(String),
    });
    expect(types.filter((t) => t === 'INSTRUCTION')).toHaveLength(3);
    expect(types.filter((t) => t === 'CHALLENGE_PASSED')).toHaveLength(3);
    // The instructions come after the face was found, the operation after the last one was followed.
    expect(types.indexOf('FACE_FOUND')).toBeLessThan(types.indexOf('INSTRUCTION'));
    expect(types.lastIndexOf('CHALLENGE_PASSED')).toBeLessThan(types.indexOf('PROCESSING'));
    expect(camera.events.find((e) => e.type === 'INSTRUCTION')).toMatchObject({
      step: 1,
      steps: 3,
      withinMs: 8000,
      instruction: expect.stringMatching(/^(TURN_LEFT|TURN_RIGHT|BLINK)$/),
    });
    const row = await storedOperation(booted(), session.result!.operationUuid);
    expect(row).toMatchObject({ type: 'IDENTIFY', status: session.result!.status });
    // The images the operation ran on (kept under its UUID) are frontal frames, none of the turned or blinking ones.
    const images = await booted()
      .services.ctx.db.selectFrom('images')
      .select('bytes')
      .where('operation_uuid', '=', session.result!.operationUuid!)
      .execute();
    expect(images).toHaveLength(2);
    for (const image of images) expect(Buffer.from(image.bytes!).equals(Buffer.from(frontal))).toBe(true);
  }, 120_000);

  it('a photo held still fails the instructions: DONE with LIVENESS_CHECK_FAILED, recorded with the instructions given', async () => {
    const still: CaptureMedia = {
      async *frames(signal) {
        while (!signal.aborted) yield frontal;
      },
      release: async () => {},
    };
    const events: Record<string, unknown>[] = [];
    const params = InitParams.parse({
      kind: 'FV',
      purpose: 'CHECK',
      livenessFrames: 1,
      activeLiveness: { challenges: 1, challengeSeconds: 3, retries: 0 },
    });
    const session = new CaptureSession(booted().services, params, admin, still, (e) => events.push(e));
    session.start();
    await session.finished;
    expect(session.state).toBe('DONE');
    expect(session.result).toMatchObject({
      status: 'LIVENESS_CHECK_FAILED',
      reason: 'ACTIVE_LIVENESS_FAILED',
      operationUuid: expect.any(String),
    });
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['FACE_FOUND', 'INSTRUCTION', 'CHALLENGE_FAILED', 'DONE']),
    );
    expect(events.find((e) => e.type === 'CHALLENGE_FAILED')).toMatchObject({ reason: 'TIMEOUT', retriesLeft: 0 });
    expect(events.map((e) => e.type)).not.toContain('PROCESSING');
    const row = await storedOperation(booted(), session.result!.operationUuid);
    expect(row).toMatchObject({ type: 'CHECK', status: 'LIVENESS_CHECK_FAILED' });
    expect(row.details).toMatchObject({
      reason: 'ACTIVE_LIVENESS_FAILED',
      activeLiveness: [{ instruction: expect.any(String), outcome: 'TIMEOUT' }],
    });
  }, 60_000);
});

describe('a capture that sees nobody gives its resources back (BIMS_CAPTURE_IDLE_SECONDS)', () => {
  /** A camera that shows `frame` five times a second until the capture lets it go, and says when it was let go. */
  function camera(frame: Uint8Array) {
    let released = 0;
    const media: CaptureMedia = {
      async *frames(signal) {
        while (!signal.aborted) {
          yield Buffer.from(frame);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      },
      release: async () => {
        released++;
      },
    };
    return { media, released: () => released };
  }
  /** The booted services with a short idle limit (the same database, pool and settings otherwise). */
  const patient = (seconds: number) => ({
    ...booted().services,
    ctx: { ...booted().services.ctx, config: { ...booted().services.ctx.config, BIMS_CAPTURE_IDLE_SECONDS: seconds } },
  });

  it('ends TIMEOUT well before its own timeout when no face came for the idle limit, releasing its media', async () => {
    const grey = encodePng({ width: 64, height: 64, data: new Uint8Array(64 * 64 * 3).fill(128) });
    const { media, released } = camera(grey);
    const params = InitParams.parse({ kind: 'FV', purpose: 'CHECK', timeoutSeconds: 600 });
    const events: string[] = [];
    const session = new CaptureSession(patient(2), params, admin, media, (e) => events.push(e.type));
    session.start();
    await session.finished;
    expect(session.state).toBe('TIMEOUT');
    expect(session.result).toMatchObject({ status: 'TIMEOUT', reason: 'nobody seen for 2 s' });
    expect(session.metrics.resultMs).toBeLessThan(60_000);
    expect(events).toEqual(expect.arrayContaining(['STARTED', 'MEDIA', 'NO_FACE', 'TIMEOUT']));
    expect(released()).toBe(1);
    const row = await storedOperation(booted(), session.result!.operationUuid);
    expect(row).toMatchObject({ type: 'CHECK', status: 'FAILED' });
    expect(row.details).toMatchObject({ reason: 'IDLE', capture: { lastGuidance: 'NO_FACE' } });
  }, 60_000);

  it('a face seen keeps it waiting: the same idle limit does not end a capture whose camera shows one', async () => {
    // A face that never passes the gates (blurred), so the capture keeps going; the face keeps it patient.
    const { media } = camera(blurred('labelled/franck/franck_02159.jpg'));
    const params = InitParams.parse({ kind: 'FV', purpose: 'CHECK', timeoutSeconds: 6, livenessFrames: 1 });
    const session = new CaptureSession(patient(2), params, admin, media);
    session.start();
    await session.finished;
    expect(session.result, JSON.stringify(session.result)).toMatchObject({
      status: 'TIMEOUT',
      reason: 'no result within 6 s',
    });
  }, 60_000);
});
