import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, bootForTest } from '../support/databases.js';

/**
 * Multipart forms as RFC 7578 writes them (issue 32, point 3), through HTTP without a socket: quoted
 * parameters are not split at the `;` inside them, `filename*` (RFC 6266 / 8187) marks a file part,
 * `__proto__` and `constructor` are part names like any other, and a preamble and an epilogue (RFC 2046) are
 * ignored. No extractor: a form that reaches extraction is answered 503, one refused before it 400 naming the
 * part, so the answers tell how each part was read.
 */
describe('multipart/form-data parts as RFC 7578 names them', () => {
  let booted: Awaited<ReturnType<typeof bootForTest>>;
  beforeAll(async () => {
    booted = await bootForTest('pglite');
  });
  afterAll(async () => {
    await booted?.close();
  });

  const B = 'XbOuNdArYx';
  /** A form body from raw parts (`[header lines, content]`), as a client could write it. */
  const body = (parts: [string, string][], { preamble = '', epilogue = '' } = {}) =>
    `${preamble}${parts.map(([headers, content]) => `--${B}\r\n${headers}\r\n\r\n${content}\r\n`).join('')}--${B}--${epilogue}`;
  const post = async (path: string, text: string | ReadableStream<Uint8Array>) => {
    const res = await booted.app.request(path, {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': `multipart/form-data; boundary=${B}` },
      body: text,
      ...(typeof text === 'string' ? {} : { duplex: 'half' }),
    } as RequestInit);
    const problem = res.status === 503 ? null : await res.json();
    return { status: res.status, problem, fields: (problem?.errors ?? []).map((e: { field: string }) => e.field) };
  };
  const identify = (imagePart: string, content = 'not an image') =>
    body([
      ['Content-Disposition: form-data; name="type"', 'IDENTIFY'],
      [imagePart, content],
    ]);

  it('a quoted filename holding "; name=" is still the part named by name', async () => {
    const res = await post(
      '/admin/operations/create',
      identify('Content-Disposition: form-data; filename="a; name=typeX"; name="image"', ''),
    );
    // Read as the first image part, which is empty: before, it was a part named typeX.
    expect(res.status).toBe(400);
    expect(res.fields).toEqual(['body.image.0']);
    expect(JSON.stringify(res.problem)).not.toMatch(/typeX/);
  });

  it('filename* alone marks a file part; a quoted name may hold escaped quotes and semicolons', async () => {
    const star = await post(
      '/admin/operations/create',
      identify(`Content-Disposition: form-data; name="image"; filename*=UTF-8''%C3%A9t%C3%A9%20%22x%22.jpg`),
    );
    // A file part reaches extraction (503: this service has none); as a text field it would be a 400.
    expect(star.status).toBe(503);
    const bogusCharset = await post(
      '/admin/operations/create',
      identify(`Content-Disposition: form-data; name="image"; filename*=bogus''%FF.jpg`),
    );
    expect(bogusCharset.status).toBe(503);
    const text = await post('/admin/operations/create', identify('Content-Disposition: form-data; name="image"'));
    expect(text).toMatchObject({ status: 400, fields: ['body.image'] });
    const odd = await post(
      '/admin/operations/create',
      body([
        ['Content-Disposition: form-data; name="type"', 'IDENTIFY'],
        ['Content-Disposition: form-data; name="we\\"ird; name=image"', 'x'],
      ]),
    );
    // An unknown part named `we"ird; name=image`, and no image at all.
    expect(odd).toMatchObject({ status: 400, fields: ['body.we"ird; name=image', 'body.image'] });
    expect(odd.problem.errors[1].message).toMatch(/give at least one face/);
  });

  it('__proto__, constructor and other Object.prototype names are ordinary unknown parts', async () => {
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      for (const disposition of [`name="${name}"`, `name="${name}"; filename="f.bin"`]) {
        const res = await post(
          '/admin/operations/create',
          body([
            ['Content-Disposition: form-data; name="type"', 'IDENTIFY'],
            ['Content-Disposition: form-data; name="image"; filename="a.jpg"', 'x'],
            [`Content-Disposition: form-data; ${disposition}`, '{"a":1}'],
          ]),
        );
        expect(res, `${name} (${disposition})`).toMatchObject({ status: 400, fields: [`body.${name}`] });
        expect(res.problem.errors[0].message).toBe('is not a known field');
      }
    }
  });

  it('a preamble and an epilogue are ignored, the epilogue also when it comes in a chunk of its own', async () => {
    const parts: [string, string][] = [
      ['Content-Disposition: form-data; name="type"', 'IDENTIFY'],
      ['Content-Disposition: form-data; name="image"; filename="a.jpg"', ''],
    ];
    const wrapped = body(parts, { preamble: 'This is a preamble.\r\n', epilogue: '\r\nand an epilogue\r\n' });
    expect(await post('/admin/operations/create', wrapped)).toMatchObject({ status: 400, fields: ['body.image.0'] });
    const split = body(parts);
    const chunks = [split, '\r\n', 'epilogue'].map((s) => new TextEncoder().encode(s));
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    expect(await post('/admin/operations/create', stream)).toMatchObject({ status: 400, fields: ['body.image.0'] });
  });

  it('broken forms are 400s naming the body, with the reason', async () => {
    const many = body(
      Array.from({ length: 65 }, (_, i) => [`Content-Disposition: form-data; name="f${i}"`, 'v'] as [string, string]),
    );
    for (const [text, reason] of [
      [`--${B}\r\nContent-Disposition: form-data; name="a"\r\n\r\nno end`, /no closing boundary/],
      ['nothing here', /no closing boundary/],
      [`--${B}\r\nContent-Disposition: form-data\r\n\r\nx\r\n--${B}--`, /a part has no name/],
      [`--${B}\r\nContent-Type: text/plain\r\n\r\nx\r\n--${B}--`, /Content-Disposition: form-data/],
      [`--${B}\r\nContent-Disposition: form-data; name="a"${'x'.repeat(17_000)}\r\n\r\nx\r\n--${B}--`, /16 KiB/],
      [many, /more than 64 parts/],
    ] as const) {
      const res = await post('/admin/operations/create', text);
      expect(res.status).toBe(400);
      expect(res.fields).toEqual(['body']);
      expect(res.problem.detail).toMatch(reason);
    }
    const noBoundary = await booted.app.request('/admin/operations/create', {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'multipart/form-data' },
      body: 'x',
    });
    expect(noBoundary.status).toBe(400);
    expect((await noBoundary.json()).detail).toMatch(/names no boundary/);
  });

  it('a text part over 1 MiB is refused naming it, before it is decoded', async () => {
    const res = await post(
      '/admin/subjects/create',
      body([
        ['Content-Disposition: form-data; name="subjectId"', 'x'.repeat(1024 * 1024 + 1)],
        ['Content-Disposition: form-data; name="image"; filename="a.jpg"', 'x'],
      ]),
    );
    expect(res).toMatchObject({ status: 400, fields: ['body.subjectId'] });
    expect(res.problem.detail).toMatch(/longer than 1048576 bytes/);
  });
});
