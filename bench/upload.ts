// npm run bench -- upload [--rounds N] [--scale S]
// What a photo upload costs the HTTP layer as JSON (base64 inside) and as multipart/form-data (the photo's own
// bytes), from the socket to the validated body: createSubject over loopback on a service without an
// extractor, which answers 503 right after the body was read and validated, so extraction does not drown the
// difference. The two forms alternate in each round (ABAB, then BABA) against one server; bodies are built
// before timing. Prints medians, their ratio, bytes on the wire and the load average around the run.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { loadConfig } from '../src/config/config.js';
import { boot } from '../src/runtime/bootstrap.js';
import { createLogger } from '../src/logger.js';
import { decodeImage } from '../src/biometrics/image/decode.js';
import { encodePng } from '../src/biometrics/image/encode.js';

const PHOTO = new URL('../test/fixtures/photos/labelled/franck/franck_01829.jpg', import.meta.url);

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

/** The photo scaled up (nearest neighbour) with a little noise, re-encoded as PNG: a camera-sized upload. */
async function bigPng(scale: number): Promise<Uint8Array> {
  const src = await decodeImage(new Uint8Array(readFileSync(PHOTO)));
  const width = Math.round(src.width * scale);
  const height = Math.round(src.height * scale);
  const data = new Uint8Array(width * height * 3);
  let seed = 7;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const s =
        (Math.min(src.height - 1, Math.floor(y / scale)) * src.width + Math.min(src.width - 1, Math.floor(x / scale))) *
        3;
      for (let c = 0; c < 3; c++) {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        data[(y * width + x) * 3 + c] = Math.max(0, Math.min(255, src.data[s + c]! + ((seed >> 16) % 7) - 3));
      }
    }
  }
  return encodePng({ width, height, data });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function run(args: string[]) {
  const rounds = option(args, 'rounds', 12);
  const scale = option(args, 'scale', 2.5);
  const password = 'bench-admin-password';
  const config = loadConfig({
    BIMS_ADMIN_PASSWORD: password,
    BIMS_PASSWORD_ITERATIONS: '10000',
    BIMS_LOG_LEVEL: 'silent',
  });
  const booted = await boot({
    config,
    runtime: 'bench',
    hostname: 'bench',
    pgliteDir: 'memory://',
    logger: createLogger('silent'),
  });
  const server = await new Promise<{ url: string; close: () => void }>((resolve) => {
    const s = serve({ fetch: booted.app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
      resolve({ url: `http://127.0.0.1:${info.port}`, close: () => s.close() }),
    );
  });
  const photo = await bigPng(scale);
  const auth = `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`;
  const json = {
    type: 'application/json',
    body: new TextEncoder().encode(
      JSON.stringify({ subjectId: 'bench', faces: [{ image: Buffer.from(photo).toString('base64') }] }),
    ),
  };
  const form = new FormData();
  form.append('subjectId', 'bench');
  form.append('image', new Blob([photo as Uint8Array<ArrayBuffer>], { type: 'image/png' }), 'photo.png');
  const encoded = new Response(form);
  const multipart = { type: encoded.headers.get('content-type')!, body: new Uint8Array(await encoded.arrayBuffer()) };

  const send = async (b: { type: string; body: Uint8Array }) => {
    const started = performance.now();
    const res = await fetch(`${server.url}/admin/subjects/create`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': b.type },
      body: b.body as Uint8Array<ArrayBuffer>,
    });
    await res.arrayBuffer();
    // No extractor: a 503 means the body was read and validated and the service asked for extraction.
    if (res.status !== 503) throw new Error(`expected 503 after validation, got ${res.status}`);
    return performance.now() - started;
  };
  const load = [loadavg()[0]!];
  for (let i = 0; i < 3; i++) await send(json), await send(multipart); // warm-up
  const times = { json: [] as number[], multipart: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? (['json', 'multipart'] as const) : (['multipart', 'json'] as const);
    for (const kind of order) times[kind].push(await send(kind === 'json' ? json : multipart));
  }
  load.push(loadavg()[0]!);
  server.close();
  await booted.close();
  const jsonMs = median(times.json);
  const multipartMs = median(times.multipart);
  return {
    bench: 'upload',
    photoBytes: photo.length,
    wireBytes: { json: json.body.length, multipart: multipart.body.length },
    medianMs: { json: Math.round(jsonMs * 10) / 10, multipart: Math.round(multipartMs * 10) / 10 },
    multipartOverJson: Math.round((multipartMs / jsonMs) * 100) / 100,
    rounds,
    loadAverage1m: load.map((l) => Math.round(l * 10) / 10),
  };
}
