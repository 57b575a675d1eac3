// Photos sent the way people send them (issue 20): multipart/form-data on createSubject, createOperation and
// checkImage, from fetch + FormData and from real `curl -F`, with multi-megabyte photos against a started server.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, adminAuth, bootForTest } from '../support/databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { serveOnLoopback } from '../support/serve.js';
import { photo } from '../biometrics/helpers.js';
import { decodeImage } from '../../src/biometrics/image/decode.js';
import { encodePng } from '../../src/biometrics/image/encode.js';
import { ALLISON, ALLISON_PROBE, wav } from '../support/speech.js';

const run = promisify(execFile);
const franck = [
  'labelled/franck/franck_01829.jpg',
  'labelled/franck/franck_04000.jpg',
  'labelled/franck/franck_02683.jpg',
];
const blob = (bytes: Uint8Array, type: string) => new Blob([bytes as Uint8Array<ArrayBuffer>], { type });

/**
 * A multi-megabyte PNG of a real face: the photo scaled up 2.5 times (bilinear) with a little sensor-like
 * noise, so deflate cannot shrink it to nothing (as a camera's PNG export would be).
 */
async function bigPng(rel: string, scale = 2.5): Promise<Uint8Array> {
  const src = await decodeImage(photo(rel));
  const width = Math.round(src.width * scale);
  const height = Math.round(src.height * scale);
  const data = new Uint8Array(width * height * 3);
  let seed = 12345;
  for (let y = 0; y < height; y++) {
    const sy = Math.min(src.height - 1.001, y / scale);
    const y0 = Math.floor(sy);
    const fy = sy - y0;
    for (let x = 0; x < width; x++) {
      const sx = Math.min(src.width - 1.001, x / scale);
      const x0 = Math.floor(sx);
      const fx = sx - x0;
      for (let c = 0; c < 3; c++) {
        const at = (xx: number, yy: number) => src.data[(yy * src.width + xx) * 3 + c]!;
        const v =
          (at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx) * (1 - fy) +
          (at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx) * fy;
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        data[(y * width + x) * 3 + c] = Math.max(0, Math.min(255, Math.round(v + ((seed >> 16) % 7) - 3)));
      }
    }
  }
  return encodePng({ width, height, data });
}

afterAll(async () => {
  await closeSharedExtractor();
});

describe('multipart/form-data uploads on a started server', () => {
  let booted: Awaited<ReturnType<typeof bootForTest>>;
  let server: Awaited<ReturnType<typeof serveOnLoopback>>;
  let big: Uint8Array;
  let dir: string;
  let bigPath: string;
  beforeAll(async () => {
    booted = await bootForTest('pglite', {}, { createExtractor: sharedExtractorFactory() });
    server = await serveOnLoopback(booted.app.fetch);
    big = await bigPng(franck[0]!);
    dir = mkdtempSync(join(tmpdir(), 'bims-multipart-'));
    bigPath = join(dir, 'franck big.png');
    writeFileSync(bigPath, big);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await booted?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const send = (path: string, form: FormData, auth = adminAuth) =>
    fetch(server.url + path, { method: 'POST', headers: { authorization: auth }, body: form });

  it('enrols a subject from a multi-megabyte PNG part, with metadata and options as JSON parts; the original is stored byte for byte', async () => {
    expect(big.length).toBeGreaterThan(3 * 1024 * 1024);
    const form = new FormData();
    form.append('subjectId', 'franck-form');
    form.append('image', blob(big, 'image/png'), 'franck.png');
    form.append(
      'metadata',
      blob(new TextEncoder().encode(JSON.stringify({ office: 'north', tags: ['a'] })), 'application/json'),
    );
    form.append('options', JSON.stringify({ deduplicate: true }));
    const res = await send('/admin/subjects/create', form);
    expect(res.status).toBe(201);
    const subject = await res.json();
    expect(subject).toMatchObject({
      subjectId: 'franck-form',
      status: 'ENROLLED',
      modalities: ['FACE'],
      metadata: { office: 'north', tags: ['a'] },
    });
    const original = await booted.services.ctx.db
      .selectFrom('images')
      .select(['format', 'bytes', 'width'])
      .where('subject_ref', '=', subject.id)
      .where('kind', '=', 'ORIGINAL')
      .executeTakeFirstOrThrow();
    expect(original.format).toBe('PNG');
    expect(original.width).toBe(1800);
    expect(Buffer.from(original.bytes!).equals(Buffer.from(big))).toBe(true);
  }, 120_000);

  it('verifies with two image parts (another photo of the same person matches), and IDENTIFY finds him', async () => {
    const form = new FormData();
    form.append('type', 'VERIFY');
    form.append('subjectId', 'franck-form');
    form.append('image', blob(photo(franck[1]!), 'image/jpeg'), 'a.jpg');
    form.append('image', blob(photo(franck[2]!), 'image/jpeg'), 'b.jpg');
    const res = await send('/admin/operations/create', form);
    expect(res.status).toBe(201);
    const verify = await res.json();
    expect(verify).toMatchObject({ type: 'VERIFY', status: 'SUCCESS', subjectId: 'franck-form' });
    expect(verify.score).toBeGreaterThanOrEqual(verify.threshold);
    // Both parts were used: two probe images are kept under the operation.
    const probes = await booted.services.ctx.db
      .selectFrom('images')
      .select('kind')
      .where('operation_uuid', '=', verify.uuid)
      .execute();
    expect(probes).toHaveLength(2);

    const identify = new FormData();
    identify.append('type', 'IDENTIFY');
    identify.append('image', blob(photo(franck[2]!), 'image/jpeg'), 'c.jpg');
    const found = await (await send('/admin/operations/create', identify)).json();
    expect(found.candidates[0]).toMatchObject({ subjectId: 'franck-form', rank: 1 });
  }, 120_000);

  it('enrols a face and three voice parts (WAV): one VOICE template, the recordings stored as sent', async () => {
    const form = new FormData();
    form.append('subjectId', 'allison-form');
    form.append('image', blob(photo('labelled/obama/obama4_crop.jpg'), 'image/jpeg'), 'face.jpg');
    for (const path of ALLISON) form.append('voice', blob(wav(path), 'audio/wav'), path.split('/').pop());
    const res = await send('/admin/subjects/create', form);
    expect(res.status).toBe(201);
    const subject = await res.json();
    expect(subject).toMatchObject({ subjectId: 'allison-form', modalities: ['FACE', 'VOICE'] });
    expect(subject.voices).toHaveLength(3);
    const rows = await booted.services.ctx.db
      .selectFrom('voice_samples')
      .select(['audio'])
      .where('subject_ref', '=', subject.id)
      .orderBy('id')
      .execute();
    expect(rows.map((r, i) => Buffer.from(r.audio).equals(Buffer.from(wav(ALLISON[i]!))))).toEqual([true, true, true]);
    // The held-apart recording verifies her by voice alone, sent as a form too.
    const verify = new FormData();
    verify.append('type', 'VERIFY');
    verify.append('subjectId', 'allison-form');
    verify.append('voice', blob(wav(ALLISON_PROBE), 'audio/wav'), 'probe.wav');
    const verified = await (await send('/admin/operations/create', verify)).json();
    expect(verified).toMatchObject({ status: 'SUCCESS', modalities: ['VOICE'] });
    // A voice part that is not a WAV is refused naming the part.
    const bad = new FormData();
    bad.append('type', 'IDENTIFY');
    bad.append('voice', blob(photo(franck[1]!), 'audio/wav'), 'not.wav');
    const refused = await send('/admin/operations/create', bad);
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    expect(JSON.stringify(await refused.json())).toMatch(/body\.voice\.0/);
  }, 120_000);

  it('checks one image part (the big PNG) with options', async () => {
    const form = new FormData();
    form.append('image', blob(big, 'image/png'), 'big.png');
    form.append('options', '{"checkIcao":true}');
    const res = await send('/admin/operations/checkimage', form);
    expect(res.status).toBe(200);
    const checks = await res.json();
    expect(checks).toMatchObject({ faceCount: 1 });
    expect(checks.faces[0].rectangle.width).toBeGreaterThan(200);
  }, 120_000);

  it('real curl -F image=@file enrols and verifies against the started server', async () => {
    const curl = async (...args: string[]) => {
      const { stdout } = await run('curl', ['-sS', '-u', `admin:${ADMIN_PASSWORD}`, '-w', '\n%{http_code}', ...args], {
        maxBuffer: 1 << 24,
      });
      const lines = stdout.trimEnd().split('\n');
      return { status: Number(lines.pop()), body: JSON.parse(lines.join('\n')) };
    };
    const enrolled = await curl(
      '-F',
      'subjectId=franck-curl',
      '-F',
      `image=@${bigPath};type=image/png`,
      '-F',
      'metadata={"via":"curl"};type=application/json',
      '-F',
      'options={"deduplicate":false}',
      `${server.url}/admin/subjects/create`,
    );
    expect(enrolled.status).toBe(201);
    expect(enrolled.body).toMatchObject({ subjectId: 'franck-curl', status: 'ENROLLED', metadata: { via: 'curl' } });
    const jpegPath = join(dir, 'probe.jpg');
    writeFileSync(jpegPath, photo(franck[1]!));
    const verified = await curl(
      '-F',
      'type=VERIFY',
      '-F',
      'subjectId=franck-curl',
      '-F',
      `image=@${jpegPath}`,
      `${server.url}/operations/create`,
    );
    expect(verified.status).toBe(201);
    expect(verified.body).toMatchObject({ status: 'SUCCESS', subjectId: 'franck-curl' });
  }, 120_000);

  it('bad parts are 400 problems naming the part', async () => {
    const expectField = async (res: Response, field: string) => {
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      const problem = await res.json();
      expect(problem.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(JSON.stringify(problem)).not.toMatch(/body\.faces|\/work\/|at .*\.ts/);
      return problem;
    };
    const form = (entries: [string, string | Blob][]) => {
      const f = new FormData();
      for (const [k, v] of entries) f.append(k, v);
      return f;
    };
    const jpeg = blob(photo(franck[1]!), 'image/jpeg');
    // A photo sent as a text field (curl -F image=face.jpg without the @).
    await expectField(
      await send(
        '/admin/subjects/create',
        form([
          ['subjectId', 'x1'],
          ['image', 'face.jpg'],
        ]),
      ),
      'body.image',
    );
    await expectField(
      await send(
        '/admin/subjects/create',
        form([
          ['subjectId', 'x2'],
          ['image', jpeg],
          ['metadata', '{"office":'],
        ]),
      ),
      'body.metadata',
    );
    await expectField(
      await send(
        '/admin/subjects/create',
        form([
          ['subjectId', 'x3'],
          ['image', jpeg],
          ['photo', jpeg],
        ]),
      ),
      'body.photo',
    );
    await expectField(
      await send(
        '/admin/subjects/create',
        form([
          ['subjectId', 'x4'],
          ['subjectId', 'x5'],
          ['image', jpeg],
        ]),
      ),
      'body.subjectId',
    );
    await expectField(await send('/admin/subjects/create', form([['subjectId', 'x6']])), 'body.image');
    // An empty second photo: the schema's failure names the second image part.
    await expectField(
      await send(
        '/admin/subjects/create',
        form([
          ['subjectId', 'x7'],
          ['image', jpeg],
          ['image', blob(new Uint8Array(0), 'image/jpeg')],
        ]),
      ),
      'body.image.1',
    );
    // Bytes that are no image: the extraction's failure names the part too.
    const notImage = await send(
      '/admin/operations/create',
      form([
        ['type', 'IDENTIFY'],
        ['image', blob(new TextEncoder().encode('GIF89a not a face'), 'image/gif')],
      ]),
    );
    expect(notImage.status).toBeGreaterThanOrEqual(400);
    expect(notImage.status).toBeLessThan(500);
    expect(JSON.stringify(await notImage.json())).toMatch(/body\.image\.0/);
    await expectField(
      await send(
        '/admin/operations/checkimage',
        form([
          ['image', jpeg],
          ['image', jpeg],
        ]),
      ),
      'body.image',
    );
    await expectField(
      await send(
        '/admin/operations/create',
        form([
          ['type', 'VERIFY'],
          ['image', jpeg],
        ]),
      ),
      'body.subjectId',
    );
    // A truncated multipart body (no closing boundary).
    const truncated = await fetch(server.url + '/admin/operations/checkimage', {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'multipart/form-data; boundary=XyZ' },
      body: '--XyZ\r\nContent-Disposition: form-data; name="image"; filename="a.jpg"\r\n\r\nabc',
    });
    await expectField(truncated, 'body');
    // Nothing was stored by any of them.
    const stored = await booted.services.ctx.db
      .selectFrom('subjects')
      .select('subject_id')
      .where('subject_id', 'like', 'x%')
      .execute();
    expect(stored).toEqual([]);
  }, 120_000);

  it('a sample the gates refuse is named by its part, in the refusal and in the operation it records', async () => {
    const blank = blob(encodePng({ width: 64, height: 64, data: new Uint8Array(64 * 64 * 3).fill(128) }), 'image/png');
    const jpeg = blob(photo(franck[1]!), 'image/jpeg');
    const enrol = new FormData();
    enrol.append('subjectId', 'x-blank');
    enrol.append('image', jpeg);
    enrol.append('image', blank);
    const refused = await send('/admin/subjects/create', enrol);
    expect(refused.status).toBe(422);
    const problem = await refused.json();
    expect(problem).toMatchObject({ operationStatus: 'NO_FACE_DETECTED', sampleIndex: 1 });
    expect(problem.detail).toMatch(/^body\.image\.1: /);
    // A CHECK answers 201 with the refusal in the operation it stored: the same name, not the JSON body's.
    const check = new FormData();
    check.append('type', 'CHECK');
    check.append('image', jpeg);
    check.append('image', blank);
    const checked = await send('/admin/operations/create', check);
    expect(checked.status).toBe(201);
    const operation = await checked.json();
    expect(operation.status).toBe('NO_FACE_DETECTED');
    const stored = await booted.services.ctx.db
      .selectFrom('operations')
      .select('details')
      .where('uuid', 'in', [problem.operationUuid, operation.uuid])
      .execute();
    expect(stored.map((row) => (row.details as { reason: string }).reason).sort()).toEqual([
      expect.stringMatching(/^body\.image\.1: /),
      expect.stringMatching(/^body\.image\.1: /),
    ]);
    expect(JSON.stringify([problem, operation, stored])).not.toMatch(/body\.faces/);
  }, 120_000);

  it('another media type is a 415 that names both accepted types; JSON still works', async () => {
    const res = await fetch(server.url + '/admin/operations/checkimage', {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'image/jpeg' },
      body: photo(franck[1]!) as Uint8Array<ArrayBuffer>,
    });
    expect(res.status).toBe(415);
    expect((await res.json()).detail).toMatch(/application\/json or multipart\/form-data/);
    const json = await fetch(server.url + '/admin/operations/checkimage', {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json' },
      body: JSON.stringify({ image: Buffer.from(photo(franck[1]!)).toString('base64') }),
    });
    expect(json.status).toBe(200);
  }, 60_000);

  it('an unauthenticated upload is refused before it is read, and the connection stays usable', async () => {
    const form = new FormData();
    form.append('image', blob(big, 'image/png'), 'big.png');
    const res = await send('/admin/operations/checkimage', form, 'Basic bm9ib2R5Om5vcGU=');
    expect(res.status).toBe(401);
    expect((await fetch(server.url + '/health')).status).toBe(200);
  });

  it('the documents state the form: parts, binary files, their media types', async () => {
    const doc = await (
      await fetch(server.url + '/admin/openapi.json', { headers: { authorization: adminAuth } })
    ).json();
    const body = (path: string) => doc.paths[path].post.requestBody.content;
    const create = body('/admin/subjects/create')['multipart/form-data'];
    expect(body('/admin/subjects/create')['application/json']).toBeDefined();
    const props = create.schema.properties ?? doc.components.schemas[create.schema.$ref?.split('/').pop()]?.properties;
    expect(props.image).toMatchObject({ type: 'array', items: { type: 'string', format: 'binary' } });
    expect(props.voice).toMatchObject({ type: 'array' });
    expect(Object.keys(props)).toEqual(expect.arrayContaining(['subjectId', 'metadata', 'options', 'template']));
    expect(create.encoding).toMatchObject({
      image: { contentType: 'image/jpeg, image/png' },
      voice: { contentType: 'audio/wav' },
      metadata: { contentType: 'application/json' },
    });
    expect(body('/admin/operations/create')['multipart/form-data'].schema.properties.type).toBeDefined();
    expect(body('/admin/operations/checkimage')['multipart/form-data'].schema.properties.image).toMatchObject({
      type: 'string',
      format: 'binary',
    });
    expect(doc.paths['/admin/operations/checkimage'].post.responses['415'].description).toMatch(/multipart\/form-data/);
  });
});

describe('multipart uploads over the body limit', () => {
  let booted: Awaited<ReturnType<typeof bootForTest>>;
  let server: Awaited<ReturnType<typeof serveOnLoopback>>;
  beforeAll(async () => {
    booted = await bootForTest(
      'pglite',
      { BIMS_MAX_BODY_BYTES: String(1024 * 1024) },
      { createExtractor: sharedExtractorFactory() },
    );
    server = await serveOnLoopback(booted.app.fetch);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await booted?.close();
  });

  const twoMegabytes = () => {
    const form = new FormData();
    form.append('subjectId', 'too-big');
    form.append('image', blob(new Uint8Array(2 * 1024 * 1024).fill(7), 'image/png'), 'big.png');
    return form;
  };

  it('a declared length over the limit is a 413 before anything is read', async () => {
    const res = await fetch(server.url + '/admin/subjects/create', {
      method: 'POST',
      headers: { authorization: adminAuth },
      body: twoMegabytes(),
    });
    expect(res.status).toBe(413);
    expect((await res.json()).type).toMatch(/payload-too-large/);
  });

  it('a chunked form is counted while it is parsed: 413, and the server answers the next request', async () => {
    const encoded = new Response(twoMegabytes());
    const contentType = encoded.headers.get('content-type')!;
    const bytes = new Uint8Array(await encoded.arrayBuffer());
    // A stream body has no declared length, so the limit is enforced by counting.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 64 * 1024) controller.enqueue(bytes.subarray(i, i + 64 * 1024));
        controller.close();
      },
    });
    const res = await fetch(server.url + '/admin/subjects/create', {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': contentType },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect((await res.json()).detail).toMatch(/limit of 1048576 bytes/);
    expect(await booted.services.ctx.db.selectFrom('subjects').select('id').execute()).toEqual([]);
    expect((await fetch(server.url + '/health')).status).toBe(200);
  });
});
