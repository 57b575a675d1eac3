import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import type { Browser, Page } from 'playwright-core';
import { adminAuth, bootForTest } from '../support/databases.js';
import { launchChromium } from '../support/browser.js';
import { serveOnLoopback } from '../support/serve.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { PHOTOS, photo } from '../biometrics/helpers.js';
import { cosineInt8, encodeFaceTemplate, faceRecord, parseTemplate } from '../../src/biometrics/template.js';

/**
 * Remote verification as designed: the person is enrolled on the service with one photo; a page in headless
 * Chromium loads the built SDK bundle (dist/sdk, served statically by a test-only app on another origin),
 * extracts a template from ANOTHER photo locally and sends only that template with the encrypted enrolled one
 * to /user/operations/remote-verify (CORS opened for the page through BIMS_CORS_ORIGINS).
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SDK_DIR = join(ROOT, 'dist', 'sdk');
const ENROLLED = 'labelled/franck/franck_01829.jpg';
const GENUINE = 'labelled/franck/franck_04000.jpg';
const IMPOSTOR = 'labelled/obama/obama4_crop.jpg';
const TYPES: Record<string, string> = {
  '.js': 'text/javascript',
  '.map': 'application/json',
  '.wasm': 'application/wasm',
  '.onnx': 'application/octet-stream',
  '.jpg': 'image/jpeg',
};

/** Static files by base name only (no traversal): the SDK folder and the labelled photos. */
const file = (dir: string, name: string) => {
  try {
    return new Response(readFileSync(join(dir, basename(name))), {
      headers: { 'content-type': TYPES[extname(name)] ?? 'application/octet-stream' },
    });
  } catch {
    return new Response('not found', { status: 404 });
  }
};
const pageApp = new Hono()
  .get('/', (c) =>
    c.html(`<!doctype html><html><head><title>sdk test</title>
<script type="module">import * as sdk from '/sdk/bims-face-sdk.js'; window.bims = sdk; document.title = 'ready';</script>
</head><body>sdk test</body></html>`),
  )
  // A module worker extracting off the main thread (the setup the README recommends for responsive pages).
  .get(
    '/worker.js',
    () =>
      new Response(
        `import * as bims from '/sdk/bims-face-sdk.js';
onmessage = async ({ data: url }) => {
  try {
    const sdk = await bims.createFaceSdk({ modelBaseUrl: '/sdk/', wasmBaseUrl: '/sdk/', warm: false });
    const blob = await (await fetch(url)).blob();
    const fromBlob = await sdk.extractTemplate(blob);
    const fromBitmap = await sdk.extractTemplate(await createImageBitmap(blob));
    await sdk.close();
    postMessage({ fromBlob: fromBlob.templateBase64, fromBitmap: fromBitmap.templateBase64 });
  } catch (e) {
    postMessage({ error: String(e) });
  }
};`,
        { headers: { 'content-type': 'text/javascript' } },
      ),
  )
  .get('/sdk/:name', (c) => file(SDK_DIR, c.req.param('name')))
  .get('/photos/:person/:name', (c) =>
    file(join(PHOTOS, 'labelled', basename(c.req.param('person'))), c.req.param('name')),
  );

let booted: Awaited<ReturnType<typeof bootForTest>>;
let api: Awaited<ReturnType<typeof serveOnLoopback>>;
let page: Awaited<ReturnType<typeof serveOnLoopback>>;
let browser: Browser;
let tab: Page;
let encryptedTemplate: string;
const requests: { url: string; method: string; body: string | null }[] = [];
const errors: string[] = [];

beforeAll(async () => {
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-sdk.mjs')], { stdio: 'pipe' });
  page = await serveOnLoopback(pageApp.fetch);
  booted = await bootForTest('pglite', { BIMS_CORS_ORIGINS: page.url }, { createExtractor: sharedExtractorFactory() });
  api = await serveOnLoopback(booted.app.fetch);
  const enrolled = await fetch(`${api.url}/admin/subjects/create`, {
    method: 'POST',
    headers: { authorization: adminAuth, 'content-type': 'application/json' },
    body: JSON.stringify({ subjectId: 'franck', faces: [{ image: Buffer.from(photo(ENROLLED)).toString('base64') }] }),
  });
  expect(enrolled.status).toBe(201);
  ({ encryptedTemplate } = await enrolled.json());
  browser = await launchChromium();
  tab = await browser.newPage();
  tab.on('pageerror', (e) => errors.push(e.message));
  tab.on('request', (r) => requests.push({ url: r.url(), method: r.method(), body: r.postData() }));
  await tab.goto(page.url);
  await tab.waitForFunction(() => document.title === 'ready');
});
afterAll(async () => {
  await browser?.close();
  await api?.stop();
  await page?.stop();
  await booted?.close();
  await closeSharedExtractor();
});

/** What the page reports per photo. */
interface InPage {
  templateBase64: string;
  quality: number;
  faceCount: number;
  ms: number;
  result: { verified: boolean; score: number; threshold: number; subjectId?: string };
}

/** In the page: load the SDK from relative folders, extract each photo (fetched as a Blob), remote-verify it. */
function verifyInBrowser(photos: string[]) {
  return tab.evaluate(
    async ({ apiUrl, authorization, encryptedTemplate, photos }) => {
      const bims = (window as unknown as { bims: typeof import('../../src/sdk/index.js') }).bims;
      let t = performance.now();
      const sdk = await bims.createFaceSdk({ modelBaseUrl: '/sdk/', wasmBaseUrl: '/sdk' });
      const loadMs = performance.now() - t;
      const out = [];
      for (const path of photos) {
        const blob = await (await fetch(`/photos/${path.replace('labelled/', '')}`)).blob();
        t = performance.now();
        const fresh = await sdk.extractTemplate(blob);
        const ms = performance.now() - t;
        const result = await bims.remoteVerify(
          apiUrl,
          { authorization },
          { encryptedTemplate, template: fresh.template },
        );
        out.push({
          templateBase64: fresh.templateBase64,
          quality: fresh.quality,
          faceCount: fresh.faceCount,
          ms,
          result,
        });
      }
      // Steady state: the same photo a few more times (the first call also pays for decoder and wasm warm-up).
      const blob = await (await fetch(`/photos/${photos[0].replace('labelled/', '')}`)).blob();
      const bytes = new Uint8Array(await blob.arrayBuffer());
      t = performance.now();
      for (let i = 0; i < 5; i++) await sdk.extractTemplate(bytes);
      const steadyMs = (performance.now() - t) / 5;
      await sdk.close();
      return { loadMs, steadyMs, templateVersion: sdk.templateVersion, out: out as InPage[] };
    },
    { apiUrl: api.url, authorization: adminAuth, encryptedTemplate, photos },
  );
}

/** Template the Node worker pool makes for a photo (checks off, as the SDK does). */
async function nodeTemplate(path: string) {
  const extractor = await booted.services.extractors.get();
  const analysis = await extractor.analyseFace(photo(path), { checks: false });
  return encodeFaceTemplate(extractor.templateVersion, analysis.faces[0]!);
}
const cos = (a: Uint8Array, b: Uint8Array) =>
  cosineInt8(faceRecord(parseTemplate(a))!.q, faceRecord(parseTemplate(b))!.q);

describe('browser SDK and remoteVerify', () => {
  it('verifies another photo of the enrolled person and refuses a different person, with templates made in the browser', async () => {
    requests.length = 0;
    const run = await verifyInBrowser([GENUINE, IMPOSTOR]);
    const [genuine, impostor] = run.out;
    console.log(
      `[sdk] load+warm ${run.loadMs.toFixed(0)} ms; first template ${genuine!.ms.toFixed(0)} ms, ` +
        `then ${impostor!.ms.toFixed(0)} ms; steady ${run.steadyMs.toFixed(1)} ms per template`,
    );

    expect(run.templateVersion).toBe((await booted.services.extractors.get()).templateVersion);
    expect(genuine!.result).toMatchObject({ verified: true, subjectId: 'franck' });
    expect(genuine!.result.score).toBeGreaterThanOrEqual(genuine!.result.threshold);
    expect(impostor!.result).toMatchObject({ verified: false, subjectId: 'franck' });
    expect(impostor!.result.score).toBeLessThan(impostor!.result.threshold);
    expect(genuine!.faceCount).toBe(1);
    expect(genuine!.quality).toBeGreaterThan(50);

    // Both attempts are logged as REMOTE_VERIFY operations.
    const logged = await booted.services.ctx.db
      .selectFrom('operations')
      .select(['status'])
      .where('type', '=', 'REMOTE_VERIFY')
      .orderBy('id')
      .execute();
    expect(logged.map((o) => o.status)).toEqual(['SUCCESS', 'MATCH_NOT_FOUND']);

    // Same pipeline: the browser's template equals the Node pool's for the same photo.
    for (const [path, made] of [
      [GENUINE, genuine!],
      [IMPOSTOR, impostor!],
    ] as const) {
      const browserBytes = Buffer.from(made.templateBase64, 'base64');
      const nodeBytes = await nodeTemplate(path);
      expect(cos(browserBytes, nodeBytes)).toBeGreaterThan(0.995);
      expect(Buffer.from(nodeBytes).equals(browserBytes)).toBe(true);
    }

    // The samples never left the device: the API only received the two remote-verify bodies (template +
    // ciphertext); only the three template models were fetched, and no ort .mjs glue was needed.
    const toApi = requests.filter((r) => r.url.startsWith(api.url) && r.method === 'POST');
    expect(toApi.map((r) => new URL(r.url).pathname)).toEqual([
      '/user/operations/remote-verify',
      '/user/operations/remote-verify',
    ]);
    for (const r of toApi) expect(Object.keys(JSON.parse(r.body!)).sort()).toEqual(['encryptedTemplate', 'template']);
    const assets = requests
      .filter((r) => r.url.startsWith(`${page.url}/sdk/`))
      .map((r) => basename(new URL(r.url).pathname))
      .sort();
    expect([...new Set(assets)]).toEqual([
      'fr_detect.onnx',
      'fr_feature.onnx',
      'fr_landmark.onnx',
      'mozjpeg_dec.wasm',
      'ort-wasm-simd-threaded.wasm',
    ]);
    expect(errors).toEqual([]);
  });

  it('takes an ImageBitmap and ImageData, says NO_FACE for an empty frame, and surfaces a tampered ciphertext as a 4xx', async () => {
    const run = await tab.evaluate(
      async ({ apiUrl, authorization, encryptedTemplate, path }) => {
        const bims = (window as unknown as { bims: typeof import('../../src/sdk/index.js') }).bims;
        const sdk = await bims.createFaceSdk({
          modelBaseUrl: `${location.origin}/sdk/`,
          wasmBaseUrl: new URL('/sdk/', location.href),
          warm: false,
        });
        const blob = await (await fetch(`/photos/${path}`)).blob();
        const fromBlob = await sdk.extractTemplate(blob);
        const fromBitmap = await sdk.extractTemplate(await createImageBitmap(blob));
        const grey = new ImageData(320, 240);
        grey.data.fill(128);
        const noFace = await sdk.extractTemplate(grey).then(
          () => 'found a face',
          (e) => `${e.name}:${e.code}`,
        );
        const tampered = encryptedTemplate.slice(0, -6) + (encryptedTemplate.endsWith('AAAAAA') ? 'BBBBBB' : 'AAAAAA');
        const refused = await bims
          .remoteVerify(apiUrl, { authorization }, { encryptedTemplate: tampered, template: fromBlob.templateBase64 })
          .then(
            () => 'accepted',
            (e) => `${e.name}:${e.status}`,
          );
        await sdk.close();
        const closed = await sdk.extractTemplate(blob).then(
          () => 'ran',
          (e) => `${e.name}:${e.code}`,
        );
        return { fromBlob: fromBlob.templateBase64, fromBitmap: fromBitmap.templateBase64, noFace, refused, closed };
      },
      { apiUrl: api.url, authorization: adminAuth, encryptedTemplate, path: GENUINE.replace('labelled/', '') },
    );
    // Chromium's own JPEG decoder is not mozjpeg: the pixels differ by rounding, the embedding barely.
    expect(cos(Buffer.from(run.fromBlob, 'base64'), Buffer.from(run.fromBitmap, 'base64'))).toBeGreaterThan(0.98);
    expect(run.noFace).toBe('FaceSdkError:NO_FACE');
    expect(run.refused).toMatch(/^RemoteVerifyError:4\d\d$/);
    expect(run.closed).toBe('FaceSdkError:CLOSED');
    expect(errors).toEqual([]);
  });

  it('runs inside a module Web Worker (OffscreenCanvas for bitmaps), with the same template as the Node pool', async () => {
    const run = await tab.evaluate(
      (url) =>
        new Promise<{ fromBlob?: string; fromBitmap?: string; error?: string }>((resolve) => {
          const worker = new Worker('/worker.js', { type: 'module' });
          worker.onmessage = (e) => {
            worker.terminate();
            resolve(e.data);
          };
          worker.onerror = (e) => resolve({ error: e.message });
          worker.postMessage(url);
        }),
      `/photos/${GENUINE.replace('labelled/', '')}`,
    );
    expect(run.error).toBeUndefined();
    expect(Buffer.from(run.fromBlob!, 'base64').equals(Buffer.from(await nodeTemplate(GENUINE)))).toBe(true);
    expect(cos(Buffer.from(run.fromBlob!, 'base64'), Buffer.from(run.fromBitmap!, 'base64'))).toBeGreaterThan(0.98);
    expect(errors).toEqual([]);
  });
});
