// npm run bench -- big-bodies [--uploads 10] [--rounds 2] [--idle-seconds 3] [--extract]
// Whether large request bodies hold the event loop (issue 32, point 5): ten uploads of about 31 MB at once
// (half JSON with three base64 photos, half multipart/form-data with three photo parts, all to
// /admin/operations/create as IDENTIFY) while /health is asked every 20 ms, alternated with an idle baseline
// (/health alone) in one run: idle, load, idle, load, ... The service runs in this process's main thread, as
// `npm start` runs it; the uploads and the /health probe come from two worker threads, so neither client's
// own work lands on the server's event loop. Without --extract the service has no extractor: each upload is
// read and validated whole, then answered 503 where extraction would start (the HTTP layer's cost alone, as
// `bench upload` measures it); with --extract a worker pool analyses the photos too.
// Prints /health's latency percentiles per phase, the ratio of the loaded p99 to the idle one, peak memory, and the
// uploads' statuses and times.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { serve } from '@hono/node-server';
import { loadConfig } from '../src/config/config.js';
import { boot } from '../src/runtime/bootstrap.js';
import { createLogger } from '../src/logger.js';
import { createExtractor } from '../src/extraction/index.js';
import { decodeImage } from '../src/biometrics/image/decode.js';
import { encodePng } from '../src/biometrics/image/encode.js';
import { percentiles } from './percentiles.js';

const PHOTO = new URL('../test/fixtures/photos/labelled/franck/franck_01829.jpg', import.meta.url);

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

/** The photo scaled up (nearest neighbour) with sensor-like noise, as PNG: a camera-sized upload of a real face. */
async function noisyPng(scale: number): Promise<Uint8Array> {
  const src = await decodeImage(new Uint8Array(readFileSync(PHOTO)));
  const width = Math.round(src.width * scale);
  const height = Math.round(src.height * scale);
  const data = new Uint8Array(width * height * 3);
  let seed = 7;
  for (let y = 0; y < height; y++) {
    const sy = Math.min(src.height - 1, Math.floor(y / scale));
    for (let x = 0; x < width; x++) {
      const s = (sy * src.width + Math.min(src.width - 1, Math.floor(x / scale))) * 3;
      for (let c = 0; c < 3; c++) {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        data[(y * width + x) * 3 + c] = Math.max(0, Math.min(255, src.data[s + c]! + ((seed >> 16) % 9) - 4));
      }
    }
  }
  return encodePng({ width, height, data });
}

/** A PNG of about `bytes` (within 10%), found by scaling twice from a first guess. */
async function pngOfAbout(bytes: number): Promise<Uint8Array> {
  let scale = 3;
  let png = await noisyPng(scale);
  for (let i = 0; i < 3 && Math.abs(png.length - bytes) > bytes * 0.04; i++) {
    scale *= Math.sqrt(bytes / png.length) * 0.99;
    png = await noisyPng(scale);
  }
  return png;
}

/** The /health probe: one request every 20 ms (or when the last answered) until told to stop; posts latencies. */
const PROBE = `
const { parentPort, workerData } = require('node:worker_threads');
let running = false;
parentPort.on('message', async (m) => {
  if (m === 'stop') { running = false; return; }
  running = true;
  const times = [];
  const failures = [];
  while (running) {
    const started = performance.now();
    try {
      const res = await fetch(workerData.url + '/health');
      await res.arrayBuffer();
      if (res.status !== 200) failures.push(res.status);
    } catch (e) { failures.push(String(e.cause?.code ?? e.message)); }
    const ms = performance.now() - started;
    times.push(ms);
    if (ms < 20) await new Promise((r) => setTimeout(r, 20 - ms));
  }
  parentPort.postMessage({ times, failures });
});`;

/** The uploaders: every body at once on 'go'; posts each one's status and time. */
const UPLOAD = `
const { parentPort, workerData } = require('node:worker_threads');
parentPort.on('message', async () => {
  const results = await Promise.all(workerData.bodies.map(async (b) => {
    const started = performance.now();
    try {
      const res = await fetch(workerData.url + '/admin/operations/create', {
        method: 'POST',
        headers: { authorization: workerData.auth, 'content-type': b.type },
        body: b.bytes,
      });
      const text = await res.text();
      return { kind: b.kind, status: res.status, ms: performance.now() - started, detail: res.status >= 400 && res.status !== 503 ? text.slice(0, 200) : undefined };
    } catch (e) {
      return { kind: b.kind, status: String(e.cause?.code ?? e.message), ms: performance.now() - started };
    }
  }));
  parentPort.postMessage(results);
});`;

const once = <T>(worker: Worker) => new Promise<T>((resolve) => worker.once('message', resolve));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round1 = (n: number) => Math.round(n * 10) / 10;

export async function run(args: string[]) {
  const uploads = option(args, 'uploads', 10);
  const rounds = option(args, 'rounds', 2);
  const idleSeconds = option(args, 'idle-seconds', 3);
  const extract = args.includes('--extract');
  const password = 'bench-admin-password';
  const config = loadConfig({
    BIMS_ADMIN_PASSWORD: password,
    BIMS_PASSWORD_ITERATIONS: '10000',
    BIMS_LOG_LEVEL: 'silent',
  });
  // About 31 MB each: three photos of 10 MB as form parts; three of 7.7 MB as base64 in JSON (4/3 larger).
  const formPhoto = await pngOfAbout(10_000_000);
  const jsonPhoto = await pngOfAbout(7_700_000);
  const form = new FormData();
  form.append('type', 'IDENTIFY');
  for (let i = 0; i < 3; i++)
    form.append('image', new Blob([formPhoto as Uint8Array<ArrayBuffer>], { type: 'image/png' }), `p${i}.png`);
  const encoded = new Response(form);
  const multipart = {
    kind: 'multipart',
    type: encoded.headers.get('content-type')!,
    bytes: new Uint8Array(await encoded.arrayBuffer()),
  };
  const b64 = Buffer.from(jsonPhoto).toString('base64');
  const json = {
    kind: 'json',
    type: 'application/json',
    bytes: new TextEncoder().encode(JSON.stringify({ type: 'IDENTIFY', faces: [0, 1, 2].map(() => ({ image: b64 })) })),
  };
  const booted = await boot({
    config,
    runtime: 'bench',
    hostname: 'bench',
    pgliteDir: 'memory://',
    logger: createLogger('silent'),
    ...(extract ? { createExtractor: () => createExtractor({ mode: 'worker-threads', size: 2 }) } : {}),
  });
  const server = await new Promise<{ url: string; close: () => void }>((resolve) => {
    const s = serve({ fetch: booted.app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
      resolve({ url: `http://127.0.0.1:${info.port}`, close: () => s.close() }),
    );
  });

  const bodies = Array.from({ length: uploads }, (_, i) => (i % 2 === 0 ? multipart : json));

  const auth = `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`;
  const probe = new Worker(PROBE, { eval: true, workerData: { url: server.url } });
  const uploader = new Worker(UPLOAD, { eval: true, workerData: { url: server.url, auth, bodies } });

  const phase = async (loaded: boolean) => {
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    // Memory, sampled every 50 ms: the process's resident set (server, uploaders and probe together) and the
    // server thread's own JavaScript heap with the buffers it holds (heapUsed and external are this isolate's).
    let rssPeak = 0;
    let serverPeak = 0;
    const sample = () => {
      const m = process.memoryUsage();
      rssPeak = Math.max(rssPeak, m.rss);
      serverPeak = Math.max(serverPeak, m.heapUsed + m.external);
    };
    sample();
    const sampler = setInterval(sample, 50);
    const probed = once<{ times: number[]; failures: unknown[] }>(probe);
    probe.postMessage('go');
    const started = performance.now();
    let results: { kind: string; status: number | string; ms: number; detail?: string }[] = [];
    if (loaded) {
      const done = once<typeof results>(uploader);
      uploader.postMessage('go');
      results = await done;
    } else await sleep(idleSeconds * 1000);
    probe.postMessage('stop');
    const { times, failures } = await probed;
    delay.disable();
    clearInterval(sampler);
    const blocked = { p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 };
    return { seconds: (performance.now() - started) / 1000, times, failures, results, blocked, rssPeak, serverPeak };
  };

  const load = [loadavg()[0]!];
  await phase(false); // warm-up of the probe
  const phaseTotals = () => ({
    times: [] as number[],
    failures: [] as unknown[],
    seconds: 0,
    blockedMaxMs: [] as number[],
    rssPeakMiB: [] as number[],
    serverPeakMiB: [] as number[],
  });
  const idle = phaseTotals();
  const loaded = phaseTotals();
  const rssBeforeMiB = Math.round(process.memoryUsage.rss() / 2 ** 20);
  const uploadsSeen: { kind: string; status: number | string; ms: number; detail?: string }[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const kind of r % 2 === 0 ? ['idle', 'load'] : ['load', 'idle']) {
      const p = await phase(kind === 'load');
      const into = kind === 'load' ? loaded : idle;
      into.times.push(...p.times);
      into.failures.push(...p.failures);
      into.seconds += p.seconds;
      into.blockedMaxMs.push(round1(p.blocked.max));
      into.rssPeakMiB.push(Math.round(p.rssPeak / 2 ** 20));
      into.serverPeakMiB.push(Math.round(p.serverPeak / 2 ** 20));
      uploadsSeen.push(...p.results);
    }
  }
  load.push(loadavg()[0]!);
  await probe.terminate();
  await uploader.terminate();
  server.close();
  await booted.close();

  const idleStats = percentiles(idle.times, idle.seconds);
  const loadStats = percentiles(loaded.times, loaded.seconds);
  const statuses: Record<string, number> = {};
  for (const u of uploadsSeen) statuses[`${u.kind} ${u.status}`] = (statuses[`${u.kind} ${u.status}`] ?? 0) + 1;
  const uploadMs = (kind: string) =>
    percentiles(
      uploadsSeen.filter((u) => u.kind === kind).map((u) => u.ms),
      1,
    );
  return {
    bench: 'big-bodies',
    extract,
    uploadsAtOnce: uploads,
    rounds,
    bodyBytes: { multipart: multipart.bytes.length, json: json.bytes.length },
    health: {
      idle: { ...idleStats.latencyMs, requests: idleStats.requests, failures: idle.failures },
      load: { ...loadStats.latencyMs, requests: loadStats.requests, failures: loaded.failures },
      // The server thread's own longest wait for its event loop in each phase (perf_hooks), whatever the clients saw.
      eventLoopDelayMaxMs: { idle: idle.blockedMaxMs, load: loaded.blockedMaxMs },
      p99LoadOverIdle: round1(loadStats.latencyMs.p99 / Math.max(0.1, idleStats.latencyMs.p99)),
    },
    // Resident memory of the whole bench process (the uploaders hold their bodies too) before the phases and
    // at its peak in each phase; the server thread's heap and buffers at their peak in each phase.
    memoryMiB: {
      rssBefore: rssBeforeMiB,
      rssPeak: { idle: idle.rssPeakMiB, load: loaded.rssPeakMiB },
      serverHeapAndBuffersPeak: { idle: idle.serverPeakMiB, load: loaded.serverPeakMiB },
    },
    uploads: {
      statuses,
      multipartMs: uploadMs('multipart').latencyMs,
      jsonMs: uploadMs('json').latencyMs,
      refused: uploadsSeen.filter((u) => u.detail).map((u) => u.detail),
    },
    loadAverage1m: load.map(round1),
  };
}
