import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Hono } from 'hono';
import { adminAuth, bootForTest } from './databases.js';
import { launchChromium } from './browser.js';
import { serveOnLoopback } from './serve.js';
import { startTestSidecar, type TestSidecar } from './sidecar.js';
import { setUpMediaNet, type MediaNet } from './media-net.js';
import { installPageTiming, type PageTiming } from './capture-timing.js';
import type { Extractor } from '../../src/extraction/extractor.js';

const run = promisify(execFile);
const PHOTOS = fileURLToPath(new URL('../fixtures/photos/', import.meta.url));

/**
 * What a biometric capture over the live stream needs, as a user meets it (shared by
 * test/browser/gateway-capture.test.ts and bench/capture.ts): the isolated media link (media-net.ts), a real
 * sidecar with Janus whose ICE keeps to that link, the service on PGlite and a page for Chromium to run the
 * SDK's capture helper from, both listening on the link's host end, and a folder for the fake cameras' clips.
 */
export interface CaptureRig {
  net: MediaNet;
  sidecar: Pick<TestSidecar, 'env' | 'stop'>;
  booted: Awaited<ReturnType<typeof bootForTest>>;
  api: { url: string; stop(): Promise<void> };
  page: { url: string; stop(): Promise<void> };
  clips: string;
  close(): Promise<void>;
}

const pageApp = new Hono().get('/', (c) =>
  c.html('<!doctype html><html><head><title>capture test</title></head><body>capture test</body></html>'),
);

/**
 * `env`: more configuration of the service; `createExtractor`: its extraction pool (boot's default otherwise);
 * `startSidecar`: how the sidecar runs (in this process by default; the benches may fork it as npm start does).
 */
export async function startCaptureRig(
  options: {
    env?: Record<string, string>;
    createExtractor?: () => Promise<Extractor>;
    startSidecar?: (env: Record<string, string>) => Promise<Pick<TestSidecar, 'env' | 'stop'>>;
  } = {},
): Promise<CaptureRig> {
  const clips = await mkdtemp(join(tmpdir(), 'bims-capture-clips-'));
  const net = await setUpMediaNet();
  const isolated = net.mode === 'isolated' ? net : null;
  const sidecar = await (options.startSidecar ?? startTestSidecar)(
    isolated ? { BIMS_JANUS_ICE_ENFORCE_LIST: isolated.hostIf } : {},
  );
  const listenOn = isolated?.hostAddr ?? '127.0.0.1';
  const page = await serveOnLoopback(pageApp.fetch, listenOn);
  const booted = await bootForTest(
    'pglite',
    { ...sidecar.env, BIMS_CORS_ORIGINS: page.url, ...options.env },
    { createExtractor: options.createExtractor },
  );
  const api = await serveOnLoopback(booted.app.fetch, listenOn);
  return {
    net,
    sidecar,
    booted,
    api,
    page,
    clips,
    async close() {
      await api.stop();
      await page.stop();
      await booted.close();
      await sidecar.stop();
      await net.down();
      await rm(clips, { recursive: true, force: true });
    },
  };
}

/** The fake microphone: the first 12 s of a test recording (scripts/fetch-test-speech.mjs) as a 48 kHz WAV. */
export async function speechWav(rig: CaptureRig, name: string, speechPath: string): Promise<string> {
  const out = join(rig.clips, `${name}.wav`);
  const input = fileURLToPath(new URL(`../fixtures/speech/${speechPath}`, import.meta.url));
  await run('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-i',
    input,
    '-t',
    '12',
    '-ac',
    '1',
    '-ar',
    '48000',
    '-c:a',
    'pcm_s16le',
    out,
  ]);
  return out;
}

/**
 * A Y4M clip at 10 fps, 640x480 (one second unless `seconds` says): the photo (under test/fixtures/photos/)
 * letterboxed, or a test pattern with no face. `noise`: the strength of a sensor-like noise that changes every
 * frame (0, the default, keeps every frame the same).
 */
export async function clip(
  rig: CaptureRig,
  name: string,
  photoPath?: string,
  options: { seconds?: number; noise?: number } = {},
): Promise<string> {
  const out = join(rig.clips, `${name}.y4m`);
  const input = photoPath
    ? ['-loop', '1', '-i', join(PHOTOS, photoPath)]
    : ['-f', 'lavfi', '-i', 'testsrc=size=640x480:rate=10'];
  const fit =
    'scale=640:480:force_original_aspect_ratio=decrease,pad=640:480:(ow-iw)/2:(oh-ih)/2,format=yuv420p' +
    (options.noise ? `,noise=alls=${options.noise}:allf=t` : '');
  await run('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    ...input,
    '-vf',
    fit,
    '-r',
    '10',
    '-t',
    String(options.seconds ?? 1),
    '-f',
    'yuv4mpegpipe',
    out,
  ]);
  return out;
}

/** One event of the capture as the page read it (docs/gateway-capture.md): `at` is the server's ISO time. */
export interface CaptureEventSeen {
  type: string;
  at?: string;
  [key: string]: unknown;
}

export interface BrowserCapture {
  state: string;
  events: CaptureEventSeen[];
  result?: {
    type: string;
    status: string;
    operationUuid?: string;
    subjectId?: string;
    subjectStatus?: string;
    score?: number;
    reason?: string;
  };
  metrics: Record<string, number | null>;
  sessionId: number;
  handleId: number;
  /** Milliseconds in the page from the SDK helper's call (after getUserMedia) to its outcome. */
  clientMs: number;
  /** With `timing`: what the page saw of the WebRTC connection (capture-timing.ts). */
  timing?: PageTiming;
}

let bundled: Promise<string> | undefined;
/** src/sdk/gateway-capture.ts as a script defining window.bimsCapture. */
function sdkHelper(): Promise<string> {
  bundled ??= build({
    entryPoints: [fileURLToPath(new URL('../../src/sdk/gateway-capture.ts', import.meta.url))],
    bundle: true,
    write: false,
    format: 'iife',
    globalName: 'bimsCapture',
    platform: 'browser',
    target: 'chrome110',
  }).then((out) => out.outputFiles[0]!.text);
  return bundled;
}

/**
 * A browser with the clip as its camera, on the capture page with the SDK's helper and the camera stream open,
 * as a person is before pressing start. `start` runs one capture until its outcome; `close` ends the browser.
 * The capture bench opens a level's pages before timing it, so that the level measures captures, not
 * Chromium's launches (which a real client makes on its own machine, before it captures).
 */
export interface CapturePage {
  start(params: Record<string, unknown>, authorization?: string): Promise<BrowserCapture>;
  close(): Promise<void>;
}

/** What a page needs of the rig: the media path (its network namespace), the page's and the API's addresses. */
export type PageRig = Pick<CaptureRig, 'net'> & { page: { url: string }; api: { url: string } };

export async function openCapturePage(
  rig: PageRig,
  clipPath: string,
  options: { timing?: boolean; wavPath?: string } = {},
): Promise<CapturePage> {
  const { wavPath } = options;
  const media = [
    '--use-fake-device-for-media-stream',
    '--use-fake-ui-for-media-stream',
    `--use-file-for-fake-video-capture=${clipPath}`,
    ...(wavPath ? [`--use-file-for-fake-audio-capture=${wavPath}`] : []),
  ];
  const isolated = rig.net.mode === 'isolated' ? rig.net : null;
  const browser = isolated
    ? await launchChromium([...media, `--unsafely-treat-insecure-origin-as-secure=${rig.page.url}`], {
        netns: isolated.netns,
      })
    : await launchChromium(media);
  try {
    const tab = await browser.newPage();
    await tab.goto(rig.page.url);
    // The browser SDK's capture helper, bundled from its source for this page.
    await tab.addScriptTag({ content: await sdkHelper() });
    // tsx (npm run bench) compiles with esbuild's keepNames, which wraps the function below in calls to a
    // `__name` helper the page does not have; under vitest it is a no-op.
    await tab.addScriptTag({ content: 'window.__name = window.__name || ((f) => f);' });
    if (options.timing) await tab.evaluate(installPageTiming);
    await tab.evaluate(
      async ({ audio }) => {
        (window as unknown as { __stream: MediaStream }).__stream = await navigator.mediaDevices.getUserMedia({
          video: { width: 640, height: 480 },
          audio,
        });
      },
      { audio: Boolean(wavPath) },
    );
    return {
      start: (params, authorization = adminAuth) =>
        tab.evaluate(
          async ({ apiUrl, authorization, params }) => {
            const sdk = (window as unknown as { bimsCapture: typeof import('../../src/sdk/gateway-capture.js') })
              .bimsCapture;
            const stream = (window as unknown as { __stream: MediaStream }).__stream;
            const events: { type: string }[] = [];
            let sessionId = 0;
            let handleId = 0;
            const realFetch = window.fetch.bind(window);
            // Only to learn the session id for the callers' assertions; the helper itself does every call.
            window.fetch = async (input, init) => {
              const res = await realFetch(input, init);
              if (String(input).includes('create-and-attach'))
                ({
                  session_id: sessionId,
                  data: { id: handleId },
                } = await res.clone().json());
              return res;
            };
            const t0 = performance.now();
            const outcome = await sdk.captureWithGateway(
              apiUrl,
              { authorization },
              { stream, params, onEvent: (e) => events.push(e) },
            );
            const clientMs = performance.now() - t0;
            const timing = (window as unknown as { __captureTiming?: PageTiming }).__captureTiming;
            if (timing) timing.marks.outcome = Date.now();
            return {
              sessionId,
              handleId,
              state: outcome.type,
              events,
              result: outcome,
              metrics: outcome.metrics as Record<string, number | null>,
              clientMs,
              ...(timing ? { timing } : {}),
            };
          },
          { apiUrl: rig.api.url, authorization, params },
        ) as Promise<BrowserCapture>,
      close: () => browser.close(),
    };
  } catch (error) {
    await browser.close();
    throw error;
  }
}

/** A page opened for one capture: its browser closes when that capture ends, however it ends. */
export async function openForOneCapture(
  rig: PageRig,
  clipPath: string,
  options: { timing?: boolean; wavPath?: string } = {},
): Promise<Pick<CapturePage, 'start'>> {
  const page = await openCapturePage(rig, clipPath, options);
  return { start: (params, authorization) => page.start(params, authorization).finally(() => page.close()) };
}

/** One browser with the clip as its camera; the page captures with the SDK's helper until the outcome. */
export async function captureInBrowser(
  rig: CaptureRig,
  clipPath: string,
  params: Record<string, unknown>,
  authorization = adminAuth,
  wavPath?: string,
  options: { timing?: boolean } = {},
): Promise<BrowserCapture> {
  return (await openForOneCapture(rig, clipPath, { ...options, wavPath })).start(params, authorization);
}
